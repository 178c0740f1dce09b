import { describe, expect, it } from 'vitest';
import type { HealthConfig } from '../../../src/domain/health-config.js';
import { brakeLiningRule } from '../../../src/health/rules/brake-lining.js';
import type { ActiveAlert } from '../../../src/domain/health.js';
import { at, ruleVehicle, sample } from '../../helpers/rule-harness.js';

const lining = (seconds: number, value: unknown) => sample('brake_lining_percent', seconds, value);
const linings = (...values: unknown[]) => values.map((value, i) => lining(i * 3600, value));

function brakes(severity: ActiveAlert['severity'], percent: number): ActiveAlert {
  return {
    key: 'brakes',
    severity,
    type: 'brake_wear_detected',
    display_name: `Brake lining low: ${percent}% remaining`,
    due_date: null,
    due_miles_remaining: null,
  };
}

const vehicle = (config?: HealthConfig) => ruleVehicle(brakeLiningRule, config);

describe('brake lining', () => {
  it('is medium at exactly 25 % and nothing at 25.1 %', () => {
    expect(vehicle().feed([lining(0, 25.1)])).toEqual([]);
    expect(vehicle().feed([lining(0, 25)])).toEqual([brakes('medium', 25)]);
  });

  it('is high at exactly 10 % and medium at 10.5 %', () => {
    expect(vehicle().feed([lining(0, 10)])).toEqual([brakes('high', 10)]);
    expect(vehicle().feed([lining(0, 10.5)])).toEqual([brakes('medium', 11)]);
  });

  it('stays latched up to 50 % and clears only above it (pads replaced)', () => {
    const v = vehicle();
    expect(v.feed([lining(0, 24)])).toEqual([brakes('medium', 24)]);
    expect(v.feed(linings(30, 45, 50))).toEqual([brakes('medium', 24)]);
    expect(v.feed([lining(99_999, 50.1)])).toEqual([]);
  });

  it('a sensor jittering around 25 % raises one alert', () => {
    const v = vehicle();
    expect(v.feed([lining(0, 26)])).toEqual([]);
    expect(v.feed([lining(60, 24)])).toEqual([brakes('medium', 24)]);
    for (const [i, value] of [26, 25, 27, 24, 26].entries()) {
      expect(v.feed([lining(120 + i * 60, value)])).toEqual([brakes('medium', 24)]);
    }
    expect(v.feed(linings(26, 24, 26, 25, 27))).toEqual([brakes('medium', 24)]);
  });

  it('escalates medium to high within the episode and does not drop back', () => {
    const v = vehicle();
    expect(v.feed([lining(0, 20)])).toEqual([brakes('medium', 20)]);
    expect(v.feed([lining(60, 9)])).toEqual([brakes('high', 9)]);
    expect(v.feed(linings(15, 24, 30))).toEqual([brakes('high', 9)]);
  });

  it('re-arms after replacement and raises a second episode', () => {
    const v = vehicle();
    expect(v.feed(linings(40, 22))).toEqual([brakes('medium', 22)]);
    expect(v.feed([lining(10, 95)])).toEqual([]);
    expect(v.feed(linings(60, 30, 26))).toEqual([]);
    expect(v.feed([lining(20, 18)])).toEqual([brakes('medium', 18)]);
  });

  it('replacement and new wear within one batch leave the newest episode', () => {
    expect(vehicle().feed(linings(8, 90, 24))).toEqual([brakes('medium', 24)]);
  });

  it('a sweep without samples keeps the alert', () => {
    const v = vehicle();
    expect(v.feed([lining(0, 7)], 0)).toEqual([brakes('high', 7)]);
    expect(v.feed([], 30 * 86_400)).toEqual([brakes('high', 7)]);
  });

  it('ignores non-numeric, null, negative values and other signals', () => {
    const v = vehicle();
    expect(v.feed(linings('worn', null, -1, Number.NaN, { front: 5 }))).toEqual([]);
    expect(
      v.feed([
        lining(0, 20),
        lining(10, 'new'),
        { signal: 'fuel_percent', recordedAt: at(20), value: 80, source: 'generic' },
      ]),
    ).toEqual([brakes('medium', 20)]);
  });
});
