import { describe, expect, it } from 'vitest';
import { effectiveHealthConfig, type HealthConfig } from '../../../src/domain/health-config.js';
import { tirePressureRule } from '../../../src/health/rules/tire-pressure.js';
import type { ActiveAlert } from '../../../src/domain/health.js';
import type { RuleSample } from '../../../src/domain/sample.js';
import { at, ruleVehicle } from '../../helpers/rule-harness.js';

type Tires = Partial<Record<'front_left' | 'front_right' | 'rear_left' | 'rear_right', unknown>>;
const healthy = { front_left: 240, front_right: 240, rear_left: 240, rear_right: 240 };
/** A full reading: healthy tires, with `tires` overriding some of them. */
const tires = (seconds: number, overrides: Tires = {}): RuleSample => ({
  signal: 'tire_pressure_kpa',
  recordedAt: at(seconds),
  value: { ...healthy, ...overrides },
  source: 'generic',
});
const rearLeft = (seconds: number, kpa: unknown) => tires(seconds, { rear_left: kpa });

function tire(key: string, severity: ActiveAlert['severity'], kpa: number, placard = 240): ActiveAlert {
  return {
    key,
    severity,
    type: 'tire_pressure_low',
    display_name: `Tire pressure low: ${key.replace('_', ' ')} ${kpa} kPa (placard ${placard})`,
    due_date: null,
    due_miles_remaining: null,
  };
}

const vehicle = (config?: HealthConfig) => ruleVehicle(tirePressureRule, config);

describe('tire pressure', () => {
  it('warns low at exactly 90 % of placard (216 kPa) and not at 216.5 kPa', () => {
    expect(vehicle().feed([rearLeft(0, 216)], 0)).toEqual([tire('rear_left', 'low', 216)]);
    expect(vehicle().feed([rearLeft(0, 216.5)], 0)).toEqual([]);
  });

  it('is high at exactly 75 % of placard (180 kPa) and low at 180.1 kPa', () => {
    expect(vehicle().feed([rearLeft(0, 180)], 0)).toEqual([tire('rear_left', 'high', 180)]);
    expect(vehicle().feed([rearLeft(0, 180.1)], 0)).toEqual([tire('rear_left', 'low', 180)]);
  });

  it('holds the alert between warn and clear (cold-morning hysteresis) and clears exactly at 92 % (220.8 kPa)', () => {
    const v = vehicle();
    expect(v.feed([rearLeft(0, 215)], 0)).toEqual([tire('rear_left', 'low', 215)]);
    expect(v.feed([rearLeft(600, 218), rearLeft(1200, 220), rearLeft(1800, 220.7)], 1800)).toEqual([
      tire('rear_left', 'low', 215),
    ]);
    expect(v.feed([rearLeft(2400, 220.8)], 2400)).toEqual([]);
  });

  it('a pressure hovering around the warning line raises one alert, not one per reading', () => {
    const v = vehicle();
    const hovering = [215, 217, 214, 219, 216, 218, 215].map((kpa, i) => rearLeft(i * 600, kpa));
    expect(v.feed(hovering, 4000)).toEqual([tire('rear_left', 'low', 215)]);
    // The same hovering, one reading per evaluation: the same single alert each time.
    const stepwise = vehicle();
    for (const sample of hovering) expect(stepwise.feed([sample], 4000)).toEqual([tire('rear_left', 'low', 215)]);
  });

  it('re-arms after clearing and raises a second episode', () => {
    const v = vehicle();
    expect(v.feed([rearLeft(0, 210)], 0)).toEqual([tire('rear_left', 'low', 210)]);
    expect(v.feed([rearLeft(600, 240)], 600)).toEqual([]);
    expect(v.feed([rearLeft(1200, 217)], 1200)).toEqual([]);
    expect(v.feed([rearLeft(1800, 170)], 1800)).toEqual([tire('rear_left', 'high', 170)]);
  });

  it('escalates low to high within the episode and does not drop back to low', () => {
    const v = vehicle();
    expect(v.feed([rearLeft(0, 212)], 0)).toEqual([tire('rear_left', 'low', 212)]);
    expect(v.feed([rearLeft(60, 175)], 60)).toEqual([tire('rear_left', 'high', 175)]);
    expect(v.feed([rearLeft(120, 200), rearLeft(180, 219)], 180)).toEqual([tire('rear_left', 'high', 175)]);
    expect(v.feed([rearLeft(240, 225)], 240)).toEqual([]);
  });

  it('keeps one alert per tire, keyed by position, each with its own episode', () => {
    const v = vehicle();
    expect(v.feed([tires(0, { front_left: 200, rear_right: 170 })], 0)).toEqual([
      tire('front_left', 'low', 200),
      tire('rear_right', 'high', 170),
    ]);
    expect(v.feed([tires(60, { front_left: 241, rear_right: 172, front_right: 214 })], 60)).toEqual([
      tire('front_right', 'low', 214),
      tire('rear_right', 'high', 170),
    ]);
  });

  it('a null, missing or non-numeric value leaves that tire unchanged', () => {
    const v = vehicle();
    expect(v.feed([rearLeft(0, 170)], 0)).toEqual([tire('rear_left', 'high', 170)]);
    expect(
      v.feed([rearLeft(60, null), rearLeft(120, 'flat'), rearLeft(180, Number.NaN), rearLeft(240, -3)], 240),
    ).toEqual([tire('rear_left', 'high', 170)]);
    const missing = { signal: 'tire_pressure_kpa', recordedAt: at(300), value: { front_left: 240 }, source: 'generic' };
    expect(v.feed([missing], 300)).toEqual([tire('rear_left', 'high', 170)]);
    // A null tire never raises either.
    expect(
      vehicle().feed([tires(0, { front_left: null, front_right: null, rear_left: null, rear_right: null })], 0),
    ).toEqual([]);
  });

  it('a 0 kPa (flat) tire is high', () => {
    expect(vehicle().feed([rearLeft(0, 0)], 0)).toEqual([tire('rear_left', 'high', 0)]);
  });

  it('ignores values that are not a tire object, and other signals', () => {
    const v = vehicle();
    expect(v.feed([rearLeft(0, 200)], 0)).toEqual([tire('rear_left', 'low', 200)]);
    const odd: RuleSample[] = [null, 230, 'x', [240, 240, 240, 240]].map((value, i) => ({
      signal: 'tire_pressure_kpa',
      recordedAt: at(60 + i),
      value,
      source: 'generic',
    }));
    odd.push({ signal: 'fuel_percent', recordedAt: at(100), value: 240, source: 'generic' });
    expect(v.feed(odd, 200)).toEqual([tire('rear_left', 'low', 200)]);
  });

  it('a sweep without samples keeps the active alerts', () => {
    const v = vehicle();
    expect(v.feed([tires(0, { front_right: 178, rear_left: 205 })], 0)).toEqual([
      tire('front_right', 'high', 178),
      tire('rear_left', 'low', 205),
    ]);
    expect(v.feed([], 86_400)).toEqual([tire('front_right', 'high', 178), tire('rear_left', 'low', 205)]);
  });

  it('uses the configured placard pressure (a truck at 620 kPa)', () => {
    const v = vehicle(effectiveHealthConfig({ tires: { placardKpa: 620 } }));
    const truck = { front_left: 620, front_right: 620, rear_right: 620 };
    // The default 240 kPa tires of a car would be 39 % of this placard: high on every wheel.
    expect(v.feed([tires(0, { ...truck, rear_left: 560 })], 0)).toEqual([]);
    expect(v.feed([tires(60, { ...truck, rear_left: 558 })], 60)).toEqual([tire('rear_left', 'low', 558, 620)]);
    expect(v.feed([tires(120, { ...truck, rear_left: 465 })], 120)).toEqual([tire('rear_left', 'high', 465, 620)]);
  });

  it('rounds the display pressure to whole kPa', () => {
    expect(vehicle().feed([rearLeft(0, 169.6)], 0)).toEqual([tire('rear_left', 'high', 170)]);
  });
});
