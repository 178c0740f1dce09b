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
 *   (src/cpu-pool/), which also bounds its time, and builds the answer there (`dryRunAnswer`).
 */
import { odometerSignals } from '../domain/sample.js';
import type { HealthConfig } from '../domain/health-config.js';
import { evaluateVehicleHealth } from '../health/evaluate.js';
import { type HealthState } from '../domain/health.js';
import type { RuleSample } from '../domain/sample.js';
import type { VehicleFacts } from '../health/types.js';
import { detectMonitoringEvents, type MonitoringState } from './engine.js';
import { buildMonitoringEventBody, latestServiceAt } from './event-body.js';
import { geofenceIndexFor } from './geofences.js';
import type { MonitoringKind, MonitoringOptions } from '../domain/monitoring-kinds.js';
import type { Detection } from './types.js';
import type { EventSample } from '../domain/sample.js';
import type { Geofence } from '../domain/geo.js';

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

/** What the answer says besides the events. */
export interface DryRunAnswerContext {
  subscriptionId: string;
  vehicleId: string;
  since: Date;
}

/**
 * The odometer (km) at a time of the replayed history: the newest ECU reading at or before it,
 * else the newest GPS-derived one, else null. The samples may come in any order.
 */
function odometerReader(samples: readonly RuleSample[]): (at: Date) => number | null {
  const series = odometerSignals.map((signal) =>
    samples
      .filter((s) => s.signal === signal && typeof s.value === 'number')
      .sort((a, b) => a.recordedAt.getTime() - b.recordedAt.getTime()),
  );
  return (at) => {
    for (const of of series) {
      // Binary search for the last sample recorded at or before `at`.
      let low = 0;
      let high = of.length;
      while (low < high) {
        const middle = (low + high) >>> 1;
        if (of[middle]!.recordedAt.getTime() <= at.getTime()) low = middle + 1;
        else high = middle;
      }
      if (low > 0) return of[low - 1]!.value as number;
    }
    return null;
  };
}

/**
 * The answer's `data` (docs/monitoring.md "Dry run"): each detection's body as if detected live at
 * its triggering reading, with the odometer of that moment and the latest service before it; the
 * fields the webhook body adds for delivery (ids, `timestamp`) are left out. In the order of the
 * response schema (src/api/schemas/monitoring.ts `DryRunResult`): this is the JSON sent.
 */
export function dryRunAnswer(
  detections: readonly Detection[],
  { samples, vehicle, now }: Pick<DryRunInput, 'samples' | 'vehicle' | 'now'>,
  context: DryRunAnswerContext,
) {
  const serviceTimes = Object.values(vehicle.lastServices).map((s) => s.at.getTime());
  const odometerKmAt = odometerReader(samples);
  return {
    subscription_id: context.subscriptionId,
    since: context.since.toISOString(),
    until: now.toISOString(),
    events: detections.map((detection) => {
      const at = detection.occurredAt;
      const lastService = Math.max(...serviceTimes.filter((t) => t <= at.getTime()));
      const body = buildMonitoringEventBody(detection, {
        eventId: '',
        subscriptionId: context.subscriptionId,
        vehicleId: context.vehicleId,
        detectedAt: at,
        odometerKm: odometerKmAt(at),
        lastServiceAt: Number.isFinite(lastService) ? new Date(lastService) : null,
      });
      return {
        event: body.event,
        severity: body.severity,
        occurred_at: body.occurred_at,
        details: body.details,
        actions: body.actions,
      };
    }),
  };
}
