/**
 * The backtest (`POST /v1/subscriptions/:id/dry-run {since}`, issue 9): the events a subscription
 * would have sent from stored history, without delivering anything. The same health engine and
 * detectors as the live stage, from a fresh state, over the history in time order: one
 * evaluation per distinct reading time (the samples and provider events of that moment, `now` =
 * that moment), then one at `now` so time-based conditions (idling, due dates, confirmation timers)
 * settle as the sweep would settle them.
 *
 * - Conditions already true at the first reading fire there (a fresh state has seen nothing).
 * - Readings dated after `now` are left out.
 * - The vehicle facts (service history) are as they are now: services are not replayed, so an
 *   item serviced since `since` is judged with that service throughout.
 * - Bounded: past `maxFenceTests` geofence geometry tests (edges tested, circles measured) the
 *   replay stops with `FenceTestsExceeded`; the API runs it off its event loop, in the CPU pool
 *   (src/cpu-pool/), which also bounds its time.
 */
import type { HealthConfig } from '../health/config.js';
import { evaluateVehicleHealth, type HealthState } from '../health/evaluate.js';
import type { RuleSample, VehicleFacts } from '../health/types.js';
import { detectMonitoringEvents, type MonitoringState } from './engine.js';
import { latestServiceAt } from './event-body.js';
import { geofenceIndexFor } from './geofences.js';
import type { MonitoringKind, MonitoringOptions } from './kinds.js';
import type { Detection, EventSample, Geofence } from './types.js';

export interface DryRunInput {
  samples: readonly RuleSample[];
  events: readonly EventSample[];
  vehicle: VehicleFacts;
  healthConfig: HealthConfig;
  kinds: readonly MonitoringKind[];
  options: MonitoringOptions;
  geofences: readonly Geofence[];
  now: Date;
  /** Most geofence geometry tests the replay may run (MONITORING_DRY_RUN_MAX_FENCE_TESTS); unbounded when absent. */
  maxFenceTests?: number;
}

/** The replay needed more geofence tests than its `maxFenceTests`. */
export class FenceTestsExceeded extends Error {
  constructor(readonly maxFenceTests: number) {
    super(`the dry run needs more than ${maxFenceTests} geofence tests`);
  }
}

/** Groups items by time (epoch ms) into a map, in input order within a time. */
function byTime<T>(items: readonly T[], timeOf: (item: T) => number, untilMs: number): Map<number, T[]> {
  const groups = new Map<number, T[]>();
  for (const item of items) {
    const atMs = timeOf(item);
    if (!Number.isFinite(atMs) || atMs > untilMs) continue;
    const group = groups.get(atMs);
    if (group) group.push(item);
    else groups.set(atMs, [item]);
  }
  return groups;
}

export function dryRunMonitoring(input: DryRunInput): Detection[] {
  const nowMs = input.now.getTime();
  const samplesAt = byTime(input.samples, (sample) => sample.recordedAt.getTime(), nowMs);
  const eventsAt = byTime(input.events, (event) => event.recordedAt.getTime(), nowMs);
  const times = [...new Set([...samplesAt.keys(), ...eventsAt.keys()])].sort((a, b) => a - b);
  if (times[times.length - 1] !== nowMs) times.push(nowMs);

  const lastServiceAt = latestServiceAt(input.vehicle.lastServices);
  const subscription = { kinds: input.kinds, options: input.options };
  // The detectors test fences through this list's index (fence-transitions.ts), which counts its tests.
  const fences = geofenceIndexFor(input.geofences);
  const fenceTestsBefore = fences.tests;
  const maxFenceTests = input.maxFenceTests ?? Infinity;
  let health: HealthState | null = null;
  let state: MonitoringState | null = null;
  const detections: Detection[] = [];
  for (const atMs of times) {
    const at = new Date(atMs);
    const samples = samplesAt.get(atMs) ?? [];
    const evaluation = evaluateVehicleHealth(health, samples, input.vehicle, input.healthConfig, at, true);
    health = evaluation.state;
    const odometer = evaluation.odometer;
    const result = detectMonitoringEvents(
      state,
      {
        samples,
        events: eventsAt.get(atMs) ?? [],
        health: {
          alerts: evaluation.state.alerts,
          odometer: odometer ? { km: odometer.km, at: odometer.at } : null,
          linkBroken: evaluation.linkBroken,
          lastServiceAt,
        },
        geofences: input.geofences,
      },
      subscription,
      at,
    );
    state = result.state;
    detections.push(...result.detections);
    if (fences.tests - fenceTestsBefore > maxFenceTests) throw new FenceTestsExceeded(maxFenceTests);
  }
  // Already in order step by step; the stable sort only guarantees it across steps.
  return detections.sort((a, b) => a.occurredAt.getTime() - b.occurredAt.getTime());
}
