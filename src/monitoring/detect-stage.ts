/**
 * The monitoring stage of a health evaluation (issue 9; one pipeline, no second one): in the
 * health transaction, after the health engine ran for a set of locked vehicles, runs the pure
 * detectors of each live subscription of those vehicles over the same new samples plus the new
 * provider events, stores each subscription's new detector state, and stores every detection as
 * an event (its exact body, signed and sent on every attempt) with a pending delivery. The caller
 * asks for the subscriptions' delivery lanes after the commit (the due sweep catches a lost ask).
 * What the evaluation feeds it beyond the health rules' signals: src/evaluation/monitoring-feed.ts.
 */
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { loadCompanyGeofences } from '../db/geofences.js';
import {
  insertMonitoringEvents,
  saveDetectorStates,
  type MonitoredSubscription,
  type NewMonitoringEvent,
} from '../db/monitoring-delivery-queue.js';
import type { PoolClient } from '../db/pool.js';
import type { VehiclePredictions } from '../domain/predictions.js';
import type { RuleSample } from '../domain/sample.js';
import type { MonitoringLane } from '../queue/enqueue-monitoring.js';
import { detectMonitoringEvents } from './engine.js';
import { buildMonitoringEventBody } from './event-body.js';
import { monitoringOptions, type MonitoringKind } from '../domain/monitoring-kinds.js';
import type { Detection, MonitoringInput } from './types.js';
import type { EventSample } from '../domain/sample.js';
import type { Geofence } from '../domain/geo.js';

/**
 * The fence lists the detectors get, kept per process so a company's unchanged fences keep one
 * list object, whose geofence index (geofences.ts `geofenceIndexFor`) is then built once. Each
 * evaluation reads the company's fence ids with its subscriptions (`fenceSignature`); a list is
 * reloaded as soon as they differ (a fence created or deleted by any process).
 */
const companyFences = new Map<string, { signature: string; all: Geofence[]; watched: Map<string, Geofence[]> }>();
/** Bounds the per-process cache (companies with geofence subscriptions evaluated recently). */
const maxCachedCompanies = 10_000;

async function refreshFences(tx: PoolClient, wanted: ReadonlyMap<string, string>): Promise<void> {
  const stale = [...wanted].filter(([companyId, signature]) => companyFences.get(companyId)?.signature !== signature);
  if (stale.length === 0) return;
  const loaded = await loadCompanyGeofences(
    tx,
    stale.map(([companyId]) => companyId),
  );
  for (const [companyId] of stale) {
    if (!companyFences.has(companyId) && companyFences.size >= maxCachedCompanies) companyFences.clear();
    const all = loaded.get(companyId) ?? [];
    // The signature of what was loaded: a fence changed since the subscriptions were read is seen next time.
    companyFences.set(companyId, { signature: all.map((f) => f.id).join(','), all, watched: new Map() });
  }
}

function watchedFences(companyId: string, ids: readonly string[] | null): Geofence[] {
  const entry = companyFences.get(companyId);
  if (!entry) return [];
  if (ids === null) return entry.all;
  const key = ids.join(',');
  let watched = entry.watched.get(key);
  if (!watched) entry.watched.set(key, (watched = entry.all.filter((fence) => ids.includes(fence.id))));
  return watched;
}

export interface MonitoredVehicleEvaluation {
  vehicleId: string;
  companyId: string;
  subscriptions: readonly MonitoredSubscription[];
  /** The evaluation's new samples of every signal read (health rules' and detector-only). */
  samples: readonly RuleSample[];
  events: readonly EventSample[];
  health: MonitoringInput['health'];
}

export interface MonitoringStageResult {
  lanes: MonitoringLane[];
  /** The kind of each event stored (metrics). */
  kinds: MonitoringKind[];
}

const geofenceKinds: readonly MonitoringKind[] = ['geo_fence_entry', 'geo_fence_exit'];

/**
 * The forecasts premium events carry, by vehicle id (src/history/build-report.ts
 * `loadVehiclePredictions`), handed in by the evaluation stage (src/evaluation/evaluate-vehicles.ts):
 * monitoring and the history report do not import each other.
 */
export type PredictionsLoader = (
  tx: PoolClient,
  vehicleIds: readonly string[],
  now: Date,
) => Promise<Map<string, VehiclePredictions>>;

/** Runs the detectors of every subscription of these vehicles and stores states, events and deliveries. */
export async function detectAndStore(
  tx: PoolClient,
  vehicles: readonly MonitoredVehicleEvaluation[],
  now: Date,
  loadPredictions: PredictionsLoader,
): Promise<MonitoringStageResult> {
  if (vehicles.length === 0) return { lanes: [], kinds: [] };
  const fenceSignatures = new Map<string, string>();
  for (const vehicle of vehicles) {
    for (const subscription of vehicle.subscriptions) {
      if (subscription.events.some((kind) => geofenceKinds.includes(kind)))
        fenceSignatures.set(subscription.companyId, subscription.fenceSignature);
    }
  }
  await refreshFences(tx, fenceSignatures);

  const states: Array<{ id: string; state: Record<string, unknown> }> = [];
  const detected: Array<{
    vehicle: MonitoredVehicleEvaluation;
    subscription: MonitoredSubscription;
    detection: Detection;
  }> = [];
  for (const vehicle of vehicles) {
    for (const subscription of vehicle.subscriptions) {
      const options = monitoringOptions(subscription.options);
      const geofences = subscription.events.some((kind) => geofenceKinds.includes(kind))
        ? watchedFences(subscription.companyId, options.geofenceIds)
        : [];
      const { state, detections } = detectMonitoringEvents(
        subscription.detectorState,
        { samples: vehicle.samples, events: vehicle.events, health: vehicle.health, geofences },
        { kinds: subscription.events, options },
        now,
      );
      // Compared as stored (a JSON round trip drops undefined fields), so an idle sweep writes nothing.
      const stored = JSON.parse(JSON.stringify(state)) as Record<string, unknown>;
      if (!isDeepStrictEqual(stored, subscription.detectorState)) states.push({ id: subscription.id, state: stored });
      for (const detection of detections) detected.push({ vehicle, subscription, detection });
    }
  }
  // Premium covers all events plus predictions: read once per vehicle, only when a premium event came.
  const predictions = await loadPredictions(
    tx,
    [...new Set(detected.filter((d) => d.subscription.tier === 'premium').map((d) => d.vehicle.vehicleId))],
    now,
  );
  const events: NewMonitoringEvent[] = detected.map(({ vehicle, subscription, detection }) => {
    const id = randomUUID();
    const body = buildMonitoringEventBody(detection, {
      eventId: id,
      subscriptionId: subscription.id,
      vehicleId: vehicle.vehicleId,
      detectedAt: now,
      odometerKm: vehicle.health.odometer?.km ?? null,
      lastServiceAt: vehicle.health.lastServiceAt,
      ...(subscription.tier === 'premium' ? { predictions: predictions.get(vehicle.vehicleId) } : {}),
    });
    return {
      id,
      subscriptionId: subscription.id,
      companyId: subscription.companyId,
      vehicleId: vehicle.vehicleId,
      kind: detection.kind,
      episodeKey: detection.key,
      severity: detection.severity,
      occurredAt: detection.occurredAt,
      detectedAt: now,
      body: JSON.stringify(body),
    };
  });
  await saveDetectorStates(tx, states);
  const lanes = await insertMonitoringEvents(tx, events);
  return { lanes, kinds: events.map((e) => e.kind) };
}
