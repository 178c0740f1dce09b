import { describe, expect, it } from 'vitest';
import type { HealthConfig } from '../../../src/domain/health-config.js';
import { fuelLevelRule } from '../../../src/health/rules/fuel-level.js';
import type { ActiveAlert } from '../../../src/domain/health.js';
import type { RuleSample } from '../../../src/domain/sample.js';
import { ruleVehicle, sample } from '../../helpers/rule-harness.js';

const fuel = (seconds: number, value: unknown) => sample('fuel_percent', seconds, value);
const engine = (seconds: number, value: unknown) => sample('engine_state', seconds, value);

function low(severity: ActiveAlert['severity'], percent: number): ActiveAlert {
  return {
    key: 'fuel',
    severity,
    type: 'fuel_level_low',
    display_name: `Fuel low: ${percent}%`,
    due_date: null,
    due_miles_remaining: null,
  };
}

const vehicle = (config?: HealthConfig) => ruleVehicle(fuelLevelRule, config);

describe('fuel level', () => {
  it('raises low at 15 % held for 120 s while running, not at 119 s; 15.1 % never raises', () => {
    const v = vehicle();
    expect(v.feed([engine(0, 'on'), fuel(0, 15)], 119)).toEqual([]);
    expect(v.feed([fuel(120, 15)], 120)).toEqual([low('low', 15)]);
    const above = vehicle();
    expect(above.feed([engine(0, 'on'), fuel(0, 15.1), fuel(3000, 15.1)], 6000)).toEqual([]);
  });

  it('raises medium at 7 % after the same confirmation, and 7.1 % is only low', () => {
    const critical = vehicle();
    expect(critical.feed([engine(0, 'on'), fuel(0, 7)], 119)).toEqual([]);
    expect(critical.feed([], 120)).toEqual([low('medium', 7)]);
    const justAbove = vehicle();
    expect(justAbove.feed([engine(0, 'on'), fuel(0, 7.1)], 120)).toEqual([low('low', 7)]);
  });

  it('escalates low to medium within the episode and does not drop back', () => {
    const v = vehicle();
    expect(v.feed([engine(0, 'on'), fuel(0, 12)], 120)).toEqual([low('low', 12)]);
    expect(v.feed([fuel(300, 6)], 419)).toEqual([low('low', 12)]);
    expect(v.feed([fuel(420, 6)], 420)).toEqual([low('medium', 6)]);
    expect(v.feed([fuel(500, 9), fuel(900, 12)], 900)).toEqual([low('medium', 6)]);
  });

  it('stays latched below 20 % and clears exactly at 20 %, whatever the engine state', () => {
    const v = vehicle();
    expect(v.feed([engine(0, 'on'), fuel(0, 14)], 120)).toEqual([low('low', 14)]);
    expect(v.feed([fuel(200, 16), fuel(300, 18), fuel(400, 19.9)], 400)).toEqual([low('low', 14)]);
    expect(v.feed([engine(500, 'off'), fuel(600, 20)], 600)).toEqual([]);
  });

  it('a level sloshing around 15 % raises one alert and never flaps', () => {
    const v = vehicle();
    expect(v.feed([engine(0, 'on'), fuel(0, 14), fuel(120, 14)], 120)).toEqual([low('low', 14)]);
    const sloshing: RuleSample[] = [];
    for (let s = 150; s <= 1500; s += 30) sloshing.push(fuel(s, s % 60 === 0 ? 14 : 16));
    expect(v.feed(sloshing, 1500)).toEqual([low('low', 14)]);
    // Before an alert, the same sloshing never holds 120 s.
    const fresh = vehicle();
    const samples: RuleSample[] = [engine(0, 'on')];
    for (let s = 0; s <= 1500; s += 60) samples.push(fuel(s, s % 120 === 0 ? 14 : 16));
    expect(fresh.feed(samples, 1559)).toEqual([]);
  });

  it('re-arms after a refuel and raises a second episode', () => {
    const v = vehicle();
    expect(v.feed([engine(0, 'on'), fuel(0, 10)], 120)).toEqual([low('low', 10)]);
    expect(v.feed([fuel(1000, 90)], 1000)).toEqual([]);
    expect(v.feed([fuel(90_000, 13)], 90_119)).toEqual([]);
    expect(v.feed([], 90_120)).toEqual([low('low', 13)]);
  });

  it('does not count time with the engine off; a low last reading confirms from engine start', () => {
    const v = vehicle();
    expect(v.feed([engine(0, 'off'), fuel(0, 5)], 86_400)).toEqual([]);
    expect(v.feed([engine(86_400, 'on')], 86_519)).toEqual([]);
    expect(v.feed([], 86_520)).toEqual([low('medium', 5)]);
  });

  it('an engine stop during confirmation voids it', () => {
    const v = vehicle();
    expect(v.feed([engine(0, 'on'), fuel(0, 12), engine(100, 'off')], 100)).toEqual([]);
    expect(v.feed([engine(150, 'on')], 269)).toEqual([]);
    expect(v.feed([], 270)).toEqual([low('low', 12)]);
  });

  it('a sweep completes the confirmation only while the last reading still shows it and the engine runs', () => {
    const v = vehicle();
    expect(v.feed([engine(0, 'on'), fuel(0, 14)], 60)).toEqual([]);
    expect(v.feed([], 120)).toEqual([low('low', 14)]);
    expect(v.feed([], 100_000)).toEqual([low('low', 14)]);
    const refuelled = vehicle();
    expect(refuelled.feed([engine(0, 'on'), fuel(0, 14), fuel(60, 60)], 60)).toEqual([]);
    expect(refuelled.feed([], 100_000)).toEqual([]);
  });

  it('counts an unknown engine state as running (providers without an engine state)', () => {
    const v = vehicle();
    expect(v.feed([fuel(0, 9), fuel(120, 9)], 120)).toEqual([low('low', 9)]);
    expect(v.state.running).toBeNull();
  });

  it('ignores non-numeric, null and negative values and unknown engine states', () => {
    const v = vehicle();
    expect(
      v.feed([engine(0, 'on'), fuel(0, 12), fuel(30, '80'), fuel(60, null), fuel(90, -5), engine(100, 'parked')], 119),
    ).toEqual([]);
    expect(v.state.lastPercent).toBe(12);
    expect(v.feed([], 120)).toEqual([low('low', 12)]);
  });
});
