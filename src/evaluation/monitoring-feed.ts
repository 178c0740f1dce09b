/**
 * What a health evaluation feeds the monitoring stage beyond the health rules' signals: the
 * detector-only signals (`speed_kph`, `location`) and the new provider events. They have their
 * own watermark in the vehicle's `fed_through` (provider events under `vehicleEventsWatermark`),
 * advanced only while the vehicle is monitored; a subscription never reads what was recorded
 * before the oldest live subscription of its vehicle was created, so a new subscription does not
 * replay old history into webhooks (the dry run does that, on request).
 */
import {
  loadMonitoredSubscriptions,
  type MonitoredSubscription,
  type NewEventSample,
} from '../db/monitoring-delivery-queue.js';
import type { PoolClient } from '../db/pool.js';
import { monitoringSignals } from '../monitoring/engine.js';

/** The `fed_through` key of the provider events' watermark (no signal has this name). */
export const vehicleEventsWatermark = 'vehicle_events';
/** At most this many new provider events per vehicle and evaluation, the newest. */
const maxEventsPerEvaluation = 500;

/**
 * The vehicles' live subscriptions by vehicle id, and the new provider events of each monitored
 * vehicle, in one statement (none for unmonitored fleets).
 */
export async function loadMonitoring(
  tx: PoolClient,
  vehicles: ReadonlyArray<{ id: string; fedThrough: Readonly<Record<string, string>> }>,
): Promise<{ subscriptions: Map<string, MonitoredSubscription[]>; events: Map<string, NewEventSample[]> }> {
  const loaded = await loadMonitoredSubscriptions(
    tx,
    vehicles.map((v) => {
      const watermark = v.fedThrough[vehicleEventsWatermark];
      return { vehicleId: v.id, eventsWatermark: watermark ? new Date(watermark) : null };
    }),
    maxEventsPerEvaluation,
  );
  const subscriptions = new Map<string, MonitoredSubscription[]>();
  for (const subscription of loaded.subscriptions) {
    const list = subscriptions.get(subscription.vehicleId) ?? [];
    list.push(subscription);
    subscriptions.set(subscription.vehicleId, list);
  }
  return { subscriptions, events: loaded.events };
}

/** The signals the detectors read that the health rules do not (loaded only for monitored vehicles). */
export function detectorOnlySignals(ruleSignals: readonly string[]): string[] {
  return monitoringSignals.filter((signal) => !ruleSignals.includes(signal));
}

/**
 * Where a monitored vehicle's reads of a detector-only signal (or its provider events) start: the
 * watermark, but never before its oldest live subscription was created.
 */
export function monitoringSince(subscriptions: readonly MonitoredSubscription[], watermark: string | undefined): Date {
  const oldest = Math.min(...subscriptions.map((s) => s.createdAt.getTime()));
  return new Date(Math.max(oldest, watermark ? Date.parse(watermark) : 0));
}
