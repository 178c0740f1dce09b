import { describe, expect, it } from 'vitest';
import type { ActiveAlert } from '../../../src/domain/health.js';
import { ruleSignals } from '../../../src/db/health.js';
import { detectMonitoringEvents, monitoringSignals, type MonitoringState } from '../../../src/monitoring/engine.js';
import {
  defaultMonitoringOptions,
  monitoringKinds,
  type MonitoringKind,
} from '../../../src/domain/monitoring-kinds.js';
import { monitoringDetectors } from '../../../src/monitoring/registry.js';
import type { Geofence } from '../../../src/domain/geo.js';
import { at, event, monitoringInput, sample, type InputParts } from './detector-harness.js';

const battery: ActiveAlert = {
  key: 'battery',
  severity: 'medium',
  type: 'battery_voltage_low',
  display_name: 'Battery low: 11.9 V (engine off)',
  due_date: null,
  due_miles_remaining: null,
};
const yard: Geofence = {
  id: 'yard',
  name: 'Yard',
  area: { type: 'Circle', center: { lat: 52.52, lon: 13.4 }, radius_m: 500 },
};

/** A subscription evaluated repeatedly, its state stored as JSON between evaluations (jsonb). */
function subscription(kinds: readonly MonitoringKind[]) {
  let state: MonitoringState | null = null;
  return {
    feed(parts: InputParts, nowSeconds: number) {
      const result = detectMonitoringEvents(
        state,
        monitoringInput({ geofences: [yard], ...parts }),
        { kinds, options: defaultMonitoringOptions },
        at(nowSeconds),
      );
      state = JSON.parse(JSON.stringify(result.state)) as MonitoringState;
      expect(state).toEqual(result.state);
      return result.detections.map((d) => d.kind);
    },
    get state() {
      return state;
    },
  };
}

describe('detectMonitoringEvents', () => {
  it('lists one detector per kind, in the catalogue order', () => {
    expect(monitoringDetectors.map((d) => d.kind)).toEqual(monitoringKinds);
  });

  it('runs only the subscribed kinds and keeps state only for them', () => {
    const parts: InputParts = {
      alerts: [battery],
      events: [event('impact', 1, 3), event('airbag_deployment', 2)],
      samples: [sample('location', 0, { lat: 52.52, lon: 13.4, heading: null })],
    };
    const basic = subscription(['battery_voltage_low', 'maintenance_due']);
    expect(basic.feed(parts, 10)).toEqual(['battery_voltage_low']);
    expect(Object.keys(basic.state!)).toEqual(['battery_voltage_low', 'maintenance_due']);

    const incidents = subscription(['airbag_deployment', 'hard_impact']);
    expect(incidents.feed(parts, 10)).toEqual(['hard_impact', 'airbag_deployment']);
    expect(Object.keys(incidents.state!).sort()).toEqual(['airbag_deployment', 'hard_impact']);
  });

  it('carries every detector state through JSON: nothing fires twice, episodes continue across evaluations', () => {
    const all = subscription(monitoringKinds);
    const location = (seconds: number, lat: number) => sample('location', seconds, { lat, lon: 13.4, heading: null });
    expect(all.feed({ alerts: [battery], samples: [location(0, 52.51)] }, 0)).toEqual(['battery_voltage_low']);
    expect(all.feed({ alerts: [battery], samples: [location(10, 52.52)] }, 10)).toEqual(['geo_fence_entry']);
    expect(all.feed({ alerts: [battery], samples: [location(20, 52.52)] }, 20)).toEqual([]);
    expect(all.feed({ alerts: [], samples: [location(30, 52.51)] }, 30)).toEqual(['geo_fence_exit']);
    expect(all.feed({ alerts: [battery] }, 40)).toEqual(['battery_voltage_low']);
    expect(Object.keys(all.state!)).toEqual([...monitoringKinds]);
  });

  it('a kind dropped from the subscription loses its state; added again it starts fresh', () => {
    let state: MonitoringState | null = null;
    const run = (kinds: MonitoringKind[]) => {
      const result = detectMonitoringEvents(
        state,
        monitoringInput({ alerts: [battery] }),
        { kinds, options: defaultMonitoringOptions },
        at(0),
      );
      state = result.state;
      return result.detections.map((d) => d.kind);
    };
    expect(run(['battery_voltage_low'])).toEqual(['battery_voltage_low']);
    expect(run(['maintenance_due'])).toEqual([]);
    expect(state).not.toHaveProperty('battery_voltage_low');
    expect(run(['battery_voltage_low', 'maintenance_due'])).toEqual(['battery_voltage_low']);
  });

  it('answers detections oldest first across detectors', () => {
    const result = detectMonitoringEvents(
      null,
      monitoringInput({ alerts: [battery], events: [event('airbag_deployment', 5), event('impact', 8, 2)] }),
      { kinds: monitoringKinds, options: defaultMonitoringOptions },
      at(100),
    );
    expect(result.detections.map((d) => [d.kind, d.occurredAt.getTime() - at(0).getTime()])).toEqual([
      ['airbag_deployment', 5000],
      ['hard_impact', 8000],
      ['battery_voltage_low', 100_000],
    ]);
  });

  it('names the signals the detectors read that the health rules do not load', () => {
    expect([...monitoringSignals].sort()).toEqual(['engine_state', 'fuel_percent', 'location', 'speed_kph']);
    expect(monitoringSignals.filter((signal) => !(ruleSignals as readonly string[]).includes(signal)).sort()).toEqual([
      'location',
      'speed_kph',
    ]);
  });
});

describe('detectMonitoringEvents sample order', () => {
  it('feeds samples oldest first and the engine state first at equal times, whatever order they come in', () => {
    // Driving at 0 s, standing from 300 s: the idle starts at 300 s. Read newest first, the 0 s
    // sample would look late and the idle would seem to start at 0 s.
    const samples = [sample('speed_kph', 300, 0), sample('speed_kph', 0, 50), sample('engine_state', 0, 'on')];
    const run = (nowSeconds: number) =>
      detectMonitoringEvents(
        null,
        monitoringInput({ samples }),
        { kinds: ['excessive_idling'], options: defaultMonitoringOptions },
        at(nowSeconds),
      ).detections.map((d) => d.occurredAt);
    expect(run(600)).toEqual([]);
    expect(run(900)).toEqual([at(900)]);
  });
});
