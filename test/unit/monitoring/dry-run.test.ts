import { describe, expect, it } from 'vitest';
import { defaultHealthConfig } from '../../../src/domain/health-config.js';
import type { RuleSample } from '../../../src/domain/sample.js';
import type { VehicleFacts } from '../../../src/health/types.js';
import { dryRunMonitoring } from '../../../src/monitoring/dry-run.js';
import {
  defaultMonitoringOptions,
  monitoringKinds,
  type MonitoringKind,
} from '../../../src/domain/monitoring-kinds.js';
import type { EventSample } from '../../../src/domain/sample.js';
import type { Geofence } from '../../../src/domain/geo.js';
import { at, event, sample, t0 } from './detector-harness.js';

const vehicle: VehicleFacts = { telematicsProvider: 'generic', createdAt: at(-86_400), lastServices: {} };
const depot: Geofence = {
  id: 'depot',
  name: 'Depot',
  area: { type: 'Circle', center: { lat: 52.52, lon: 13.4 }, radius_m: 300 },
};

function dryRun(
  samples: RuleSample[],
  options: { events?: EventSample[]; kinds?: readonly MonitoringKind[]; nowSeconds: number; facts?: VehicleFacts },
) {
  return dryRunMonitoring({
    samples,
    events: options.events ?? [],
    vehicle: options.facts ?? vehicle,
    healthConfig: defaultHealthConfig,
    kinds: options.kinds ?? monitoringKinds,
    options: defaultMonitoringOptions,
    geofences: [depot],
    now: at(options.nowSeconds),
  }).map((d) => `${(d.occurredAt.getTime() - t0) / 1000}:${d.kind}${d.key ? `:${d.key}` : ''}:${d.severity}`);
}

const volts = (seconds: number, value: number) => sample('battery_voltage', seconds, value);
const fix = (seconds: number, lat: number) => sample('location', seconds, { lat, lon: 13.4, heading: null });
const speed = (seconds: number, kph: number) => sample('speed_kph', seconds, kph);

describe('dryRunMonitoring', () => {
  it('runs the health rules over history: battery low confirmed after 2 min fires once per episode, re-armed after recovery', () => {
    const samples = [sample('engine_state', 0, 'off')];
    for (let s = 0; s <= 180; s += 30) samples.push(volts(s, 12.0));
    for (let s = 210; s <= 420; s += 30) samples.push(volts(s, 12.6));
    for (let s = 450; s <= 600; s += 30) samples.push(volts(s, 11.7));
    expect(dryRun(samples, { kinds: ['battery_voltage_low'], nowSeconds: 3600 })).toEqual([
      '120:battery_voltage_low:medium',
      '570:battery_voltage_low:high',
    ]);
  });

  it('answers every kind in time order: a geofence visit, speeding, an impact between readings, idling settled at now', () => {
    const samples: RuleSample[] = [fix(0, 52.51), sample('engine_state', 0, 'on')];
    for (let s = 0; s <= 40; s += 10) samples.push(speed(s, 130));
    samples.push(fix(60, 52.52), speed(60, 0), fix(120, 52.52));
    const events = [event('impact', 45, 2.6)];
    expect(dryRun(samples, { events, nowSeconds: 60 + 600 })).toEqual([
      '30:speed_limit_exceeded:low',
      '45:hard_impact:critical',
      '60:geo_fence_entry:depot:info',
      '660:excessive_idling:low',
    ]);
  });

  it('a condition already true at the first reading fires there', () => {
    const samples = [sample('dtcs', 5, [{ code: 'C0035', system: 'chassis', mil: false }])];
    expect(dryRun(samples, { nowSeconds: 10 })).toEqual(['5:abs_warning:C0035:high']);
  });

  it('time-based maintenance comes due from the vehicle facts, dated by the odometer reading', () => {
    // Last oil change 200 days ago: 6 months passed ≈ 18 days ago (overdue, not yet escalated).
    const facts: VehicleFacts = {
      ...vehicle,
      lastServices: { oil_change: { at: at(-200 * 86_400), odometerKm: 500 } },
    };
    expect(dryRun([sample('odometer_km', 30, 1000)], { kinds: ['oil_change_needed'], facts, nowSeconds: 60 })).toEqual([
      '30:oil_change_needed:oil_change:medium',
    ]);
  });

  it('runs only the requested kinds and leaves out readings after now', () => {
    const samples = [fix(0, 52.51), fix(60, 52.52), fix(120, 52.51)];
    expect(dryRun(samples, { kinds: ['geo_fence_exit'], nowSeconds: 200 })).toEqual(['120:geo_fence_exit:depot:info']);
    expect(dryRun(samples, { kinds: ['geo_fence_exit'], nowSeconds: 100 })).toEqual([]);
    expect(dryRun([], { nowSeconds: 100 })).toEqual([]);
  });
});
