import { describe, expect, it } from 'vitest';
import { advanceWatermarks } from '../../../src/evaluation/evaluate-vehicles.js';
import type { RuleSample } from '../../../src/domain/sample.js';

const at = (minute: number) => new Date(Date.UTC(2026, 10, 20, 10, minute));
const sample = (signal: string, minute: number): RuleSample => ({
  signal,
  recordedAt: at(minute),
  value: 1,
  source: 'generic',
});

describe('advanceWatermarks', () => {
  it('moves each signal’s watermark to its own newest sample and keeps the others', () => {
    const through = advanceWatermarks([sample('dtcs', 2), sample('battery_voltage', 3), sample('battery_voltage', 5)], {
      battery_voltage: at(1).toISOString(),
      coolant_temp_c: at(9).toISOString(),
    });
    expect(through).toEqual({
      battery_voltage: at(5).toISOString(),
      dtcs: at(2).toISOString(),
      coolant_temp_c: at(9).toISOString(),
    });
  });

  it('moves a signal’s watermark even below another signal’s: a late commit of one signal is not history', () => {
    const through = advanceWatermarks([sample('dtcs', 1)], { battery_voltage: at(30).toISOString() });
    expect(through).toEqual({ battery_voltage: at(30).toISOString(), dtcs: at(1).toISOString() });
  });

  it('never moves a watermark back', () => {
    expect(advanceWatermarks([sample('dtcs', 1)], { dtcs: at(4).toISOString() })).toEqual({
      dtcs: at(4).toISOString(),
    });
  });
});
