import { describe, expect, it } from 'vitest';
import { effectiveHealthConfig, type HealthConfig } from '../../../src/domain/health-config.js';
import { batteryVoltageRule } from '../../../src/health/rules/battery-voltage.js';
import type { ActiveAlert } from '../../../src/domain/health.js';
import type { RuleSample } from '../../../src/domain/sample.js';
import { at, ruleVehicle, sample } from '../../helpers/rule-harness.js';

const volts = (seconds: number, value: unknown) => sample('battery_voltage', seconds, value);
const engine = (seconds: number, value: unknown) => sample('engine_state', seconds, value);

function battery(severity: ActiveAlert['severity'], displayName: string): ActiveAlert {
  return {
    key: 'battery',
    severity,
    type: 'battery_voltage_low',
    display_name: displayName,
    due_date: null,
    due_miles_remaining: null,
  };
}

const vehicle = (config?: HealthConfig) => ruleVehicle(batteryVoltageRule, config);

describe('battery voltage, engine off', () => {
  it('raises medium only once the voltage stayed below 12.2 V for the 120 s confirmation', () => {
    const v = vehicle();
    expect(v.feed([engine(0, 'off'), volts(0, 12.1)], 0)).toEqual([]);
    expect(v.feed([volts(60, 12.1)], 60)).toEqual([]);
    expect(v.feed([volts(119, 12.1)], 119)).toEqual([]);
    expect(v.feed([volts(120, 12.1)], 120)).toEqual([battery('medium', 'Battery low: 12.1 V (engine off)')]);
  });

  it('treats exactly 12.2 V as not low, and 12.19 V as low', () => {
    const exact = vehicle();
    expect(exact.feed([engine(0, 'off'), volts(0, 12.2), volts(600, 12.2)], 3600)).toEqual([]);
    const under = vehicle();
    expect(under.feed([engine(0, 'off'), volts(0, 12.19)], 3600)).toEqual([
      battery('medium', 'Battery low: 12.19 V (engine off)'),
    ]);
  });

  it('raises high directly when below 11.8 V for the confirmation time, not before', () => {
    const v = vehicle();
    expect(v.feed([engine(0, 'off'), volts(0, 11.7)], 119)).toEqual([]);
    expect(v.feed([volts(120, 11.7)], 120)).toEqual([battery('high', 'Battery low: 11.7 V (engine off)')]);
    expect(v.feed([volts(125, 11.8)], 130)).toEqual([battery('high', 'Battery low: 11.7 V (engine off)')]);
  });

  it('escalates medium to high within the episode, with the same key, and never drops back', () => {
    const v = vehicle();
    expect(v.feed([engine(0, 'off'), volts(0, 12.0), volts(120, 12.0)], 120)).toEqual([
      battery('medium', 'Battery low: 12.0 V (engine off)'),
    ]);
    expect(v.feed([volts(130, 11.6)], 249)).toEqual([battery('medium', 'Battery low: 12.0 V (engine off)')]);
    expect(v.feed([volts(250, 11.6)], 250)).toEqual([battery('high', 'Battery low: 11.6 V (engine off)')]);
    // Back above critical but still low: the episode keeps its high severity.
    expect(v.feed([volts(300, 12.0), volts(900, 12.0)], 900)).toEqual([
      battery('high', 'Battery low: 11.6 V (engine off)'),
    ]);
  });

  it('a sweep without samples completes the confirmation with time while the last reading still shows it', () => {
    const v = vehicle();
    expect(v.feed([engine(0, 'off'), volts(0, 12.0)], 60)).toEqual([]);
    expect(v.feed([], 119)).toEqual([]);
    expect(v.feed([], 120)).toEqual([battery('medium', 'Battery low: 12.0 V (engine off)')]);
    expect(v.feed([], 86_400)).toEqual([battery('medium', 'Battery low: 12.0 V (engine off)')]);
  });

  it('a sweep does not complete the confirmation when the last reading no longer shows it', () => {
    const v = vehicle();
    expect(v.feed([engine(0, 'off'), volts(0, 12.0), volts(60, 12.5)], 60)).toEqual([]);
    expect(v.feed([], 3600)).toEqual([]);
  });

  it('a condition held between two sparse readings raises when the later reading arrives', () => {
    const v = vehicle();
    // 12.0 V at 0 s and 12.6 V at 300 s: the low value held for 300 s, so the episode happened.
    expect(v.feed([engine(0, 'off'), volts(0, 12.0), volts(300, 12.6)], 300)).toEqual([
      battery('medium', 'Battery low: 12.0 V (engine off)'),
    ]);
  });

  it('flapping around the threshold never confirms an alert', () => {
    const v = vehicle();
    const samples = [engine(0, 'off')];
    for (let s = 0; s <= 1200; s += 30) samples.push(volts(s, s % 60 === 0 ? 12.1 : 12.3));
    expect(v.feed(samples, 1200)).toEqual([]);
    expect(v.feed([], 1229)).toEqual([]);
  });

  it('clears only after at least threshold + 0.2 V for 120 s, and flapping recovery keeps one alert', () => {
    const v = vehicle();
    expect(v.feed([engine(0, 'off'), volts(0, 12.0), volts(120, 12.0)], 120)).toEqual([
      battery('medium', 'Battery low: 12.0 V (engine off)'),
    ]);
    // 12.3 V is above the threshold but below the 12.4 V re-arm level: held for long, still active.
    expect(v.feed([volts(130, 12.3), volts(1000, 12.3)], 1000)).toEqual([
      battery('medium', 'Battery low: 12.0 V (engine off)'),
    ]);
    // Recovery interrupted every minute: one alert throughout.
    const flapping: RuleSample[] = [];
    for (let s = 1060; s <= 1600; s += 60) flapping.push(volts(s, s % 120 === 0 ? 12.5 : 12.1));
    expect(v.feed(flapping, 1600)).toEqual([battery('medium', 'Battery low: 12.0 V (engine off)')]);
    expect(v.feed([volts(1700, 12.4)], 1819)).toEqual([battery('medium', 'Battery low: 12.0 V (engine off)')]);
    expect(v.feed([], 1820)).toEqual([]);
  });

  it('re-arms after clearing and raises a second episode', () => {
    const v = vehicle();
    expect(v.feed([engine(0, 'off'), volts(0, 11.9), volts(120, 11.9)], 120)).toEqual([
      battery('medium', 'Battery low: 11.9 V (engine off)'),
    ]);
    expect(v.feed([volts(200, 12.6), volts(320, 12.6)], 320)).toEqual([]);
    expect(v.feed([volts(400, 11.5)], 519)).toEqual([]);
    expect(v.feed([volts(520, 11.5)], 520)).toEqual([battery('high', 'Battery low: 11.5 V (engine off)')]);
  });

  it('a high alert re-arms from the low threshold, so it does not clear into a new medium alert', () => {
    const v = vehicle();
    expect(v.feed([engine(0, 'off'), volts(0, 11.5), volts(120, 11.5)], 120)).toEqual([
      battery('high', 'Battery low: 11.5 V (engine off)'),
    ]);
    // 12.1 V is above critical + margin (12.0 V) but still low: the alert stays high.
    expect(v.feed([volts(200, 12.1)], 2000)).toEqual([battery('high', 'Battery low: 11.5 V (engine off)')]);
    expect(v.feed([volts(2100, 12.4)], 2220)).toEqual([]);
  });
});

describe('battery voltage, engine running', () => {
  it('raises a medium charging fault after 300 s below 13.2 V, not at 299 s', () => {
    const v = vehicle();
    expect(v.feed([engine(0, 'on'), volts(70, 13.0)], 369)).toEqual([]);
    expect(v.feed([volts(370, 13.0)], 370)).toEqual([battery('medium', 'Charging fault: 13.0 V while running')]);
  });

  it('treats exactly 13.2 V as charging, and unknown engine values as no change', () => {
    const v = vehicle();
    expect(v.feed([engine(0, 'idle'), volts(70, 13.2), engine(80, 'cranking'), volts(2000, 13.2)], 3000)).toEqual([]);
    expect(v.state.running).toBe(true);
  });

  it('ignores cranking dips within 60 s of the engine turning on; a reading at 60 s counts', () => {
    const v = vehicle();
    expect(
      v.feed(
        [engine(0, 'off'), volts(0, 12.6), engine(100, 'on'), volts(105, 9.8), volts(130, 12.9), volts(159, 12.9)],
        400,
      ),
    ).toEqual([]);
    expect(v.state.lowSinceMs).toBeNull();
    expect(v.feed([volts(160, 13.0)], 459)).toEqual([]);
    expect(v.feed([], 460)).toEqual([battery('medium', 'Charging fault: 13.0 V while running')]);
  });

  it('orders an engine start before a reading with the same time, which then falls in the cranking window', () => {
    const v = vehicle();
    expect(v.feed([engine(0, 'off'), volts(100, 11.0), engine(100, 'on')], 1000)).toEqual([]);
    expect(v.state.lowSinceMs).toBeNull();
  });

  it('restarts the confirmation when the engine changes state', () => {
    const v = vehicle();
    // Low at rest for 100 s, then the engine starts: the resting timer is void and 14.2 V is healthy.
    expect(v.feed([engine(0, 'off'), volts(0, 12.0), engine(100, 'on'), volts(170, 14.2)], 1000)).toEqual([]);
    // Running below the floor for 200 s, then switched off: the charging timer is void, 12.6 V at rest is fine.
    expect(v.feed([volts(1000, 13.0), engine(1200, 'off'), volts(1210, 12.6)], 5000)).toEqual([]);
  });

  it('a charging fault re-arms at 13.4 V: a healthy resting voltage keeps it, charging again clears it', () => {
    const v = vehicle();
    expect(v.feed([engine(0, 'on'), volts(60, 12.9), volts(360, 12.9)], 360)).toEqual([
      battery('medium', 'Charging fault: 12.9 V while running'),
    ]);
    expect(v.feed([engine(400, 'off'), volts(410, 12.6)], 2000)).toEqual([
      battery('medium', 'Charging fault: 12.9 V while running'),
    ]);
    expect(v.feed([engine(2000, 'on'), volts(2060, 13.4)], 2179)).toEqual([
      battery('medium', 'Charging fault: 12.9 V while running'),
    ]);
    expect(v.feed([], 2180)).toEqual([]);
  });

  it('a resting episode escalates to high after a charging fault with the engine off', () => {
    const v = vehicle();
    expect(v.feed([engine(0, 'on'), volts(60, 12.9), volts(360, 12.9)], 360)).toEqual([
      battery('medium', 'Charging fault: 12.9 V while running'),
    ]);
    expect(v.feed([engine(400, 'off'), volts(400, 11.7)], 520)).toEqual([
      battery('high', 'Battery low: 11.7 V (engine off)'),
    ]);
  });
});

describe('battery voltage, units and odd values', () => {
  const config24 = effectiveHealthConfig({ battery: { nominalVolts: 24 } });

  it('scales every threshold for a 24 V system', () => {
    const healthy = vehicle(config24);
    expect(healthy.feed([engine(0, 'off'), volts(0, 24.4)], 3600)).toEqual([]);
    const low = vehicle(config24);
    expect(low.feed([engine(0, 'off'), volts(0, 24.3)], 120)).toEqual([
      battery('medium', 'Battery low: 24.3 V (engine off)'),
    ]);
    expect(low.feed([volts(200, 23.5)], 320)).toEqual([battery('high', 'Battery low: 23.5 V (engine off)')]);
    // Re-arm at (12.2 + 0.2) × 2 = 24.8 V.
    expect(low.feed([volts(400, 24.7)], 4000)).toEqual([battery('high', 'Battery low: 23.5 V (engine off)')]);
    expect(low.feed([volts(4000, 24.8)], 4120)).toEqual([]);
    const charging = vehicle(config24);
    expect(charging.feed([engine(0, 'on'), volts(60, 26.4), volts(1000, 26.4)], 1000)).toEqual([]);
    expect(charging.feed([volts(1010, 26.3)], 1310)).toEqual([
      battery('medium', 'Charging fault: 26.3 V while running'),
    ]);
  });

  it('a 12 V threshold on a 24 V system is healthy: 23 V would be critical only on 24 V', () => {
    const v12 = vehicle();
    expect(v12.feed([engine(0, 'off'), volts(0, 12.5)], 600)).toEqual([]);
    const v24 = vehicle(config24);
    expect(v24.feed([engine(0, 'off'), volts(0, 12.5)], 600)).toEqual([
      battery('high', 'Battery low: 12.5 V (engine off)'),
    ]);
  });

  it('ignores non-numeric, null, NaN and 0 V values without breaking a running confirmation', () => {
    const v = vehicle();
    expect(
      v.feed(
        [
          engine(0, 'off'),
          volts(0, 12.0),
          volts(30, 'abc'),
          volts(60, null),
          volts(90, Number.NaN),
          volts(100, 0),
          volts(110, { v: 1 }),
        ],
        119,
      ),
    ).toEqual([]);
    expect(v.state.lastVolts).toBe(12.0);
    expect(v.feed([], 120)).toEqual([battery('medium', 'Battery low: 12.0 V (engine off)')]);
  });

  it('counts an unknown engine state as resting: 12.9 V is fine, 12.0 V is low', () => {
    const fine = vehicle();
    expect(fine.feed([volts(0, 12.9)], 3600)).toEqual([]);
    const low = vehicle();
    expect(low.feed([volts(0, 12.0)], 120)).toEqual([battery('medium', 'Battery low: 12.0 V (engine off)')]);
  });

  it('ignores other signals and keeps no alert from an empty evaluation', () => {
    const v = vehicle();
    expect(v.feed([{ signal: 'coolant_temp_c', recordedAt: at(0), value: 11, source: 'generic' }], 600)).toEqual([]);
    expect(v.feed([], 1200)).toEqual([]);
    expect(v.state).toEqual(batteryVoltageRule.initial());
  });
});
