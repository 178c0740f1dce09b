/**
 * Statements of the ingest path: vehicle mapping, latest state per signal, events, unmapped counts.
 *
 * Lock order, one order in every transaction that writes a vehicle's state (ingest, the manual
 * odometer of PUT /vehicles/{id}, operator PATCH, health evaluation, service requests and runs),
 * so two writers of one vehicle wait for each other instead of deadlocking:
 *   1. `vehicles` rows, in id order (FOR NO KEY UPDATE: foreign-key checks of rows that reference
 *      the vehicle are not blocked);
 *   2. then the vehicle's other rows: `runs`, `vehicle_signals` (in vehicle, signal order),
 *      `vehicle_health_state` and the history rollups (`odometer_daily`, `driving_daily`).
 * `readings` take no part: their inserts lock no vehicle row and run in parallel.
 */
import { readModelPatches } from '../domain/read-model-patch.js';
import { odometerSignals, type LatestSample } from '../domain/sample.js';
import { ownedSinceSql } from './ownership.js';
import type { Queryable } from './pool.js';

export interface VehicleSummary {
  vehicleId: string;
  newestAt: Date;
  /** Newest provider ECU odometer time in this payload (decides manual odometer writes). */
  ecuOdometerAt: Date | null;
}

export interface UnmappedCount {
  connectionId: string;
  providerVehicleId: string;
  samples: number;
  firstSeenAt: Date;
  lastSeenAt: Date;
}

export interface EventRow {
  vehicleId: string;
  kind: string;
  recordedAt: Date;
  g: number | null;
  source: string;
  /** Stored by a refresh without cascade (migrations/0027): the detectors never read it. */
  withoutCascade?: boolean;
}

/**
 * Our vehicle ids for the provider vehicle ids wanted of each connection: connection →
 * provider vehicle id → vehicle id, for those that are mapped. One statement for a whole batch.
 */
export async function mapProviderVehicles(
  q: Queryable,
  wanted: ReadonlyMap<string, ReadonlySet<string>>,
): Promise<Map<string, Map<string, string>>> {
  const connectionIds: string[] = [];
  const providerVehicleIds: string[] = [];
  for (const [connectionId, ids] of wanted) {
    for (const id of ids) {
      connectionIds.push(connectionId);
      providerVehicleIds.push(id);
    }
  }
  const mapped = new Map<string, Map<string, string>>();
  if (connectionIds.length === 0) return mapped;
  // The IS NOT NULL conditions let the planner use the partial unique index on the pair.
  const result = await q.query<{ connectionId: string; providerVehicleId: string; id: string }>({
    name: 'map-provider-vehicles',
    text: `SELECT v.provider_connection_id AS "connectionId", v.provider_vehicle_id AS "providerVehicleId", v.id
           FROM unnest($1::uuid[], $2::text[]) AS k(connection_id, provider_vehicle_id)
           JOIN vehicles v ON v.provider_connection_id = k.connection_id AND v.provider_vehicle_id = k.provider_vehicle_id
           WHERE v.provider_connection_id IS NOT NULL AND v.provider_vehicle_id IS NOT NULL`,
    values: [connectionIds, providerVehicleIds],
  });
  for (const row of result.rows) {
    const ids = mapped.get(row.connectionId) ?? new Map<string, string>();
    ids.set(row.providerVehicleId, row.id);
    mapped.set(row.connectionId, ids);
  }
  return mapped;
}

/** Locks the vehicle rows an ingest batch writes state for, in id order (the lock order above). */
export async function lockVehiclesForState(q: Queryable, vehicleIds: readonly string[]): Promise<void> {
  if (vehicleIds.length === 0) return;
  await q.query({
    name: 'lock-vehicles-for-state',
    text: `SELECT id FROM vehicles WHERE id = ANY($1::uuid[]) ORDER BY id FOR NO KEY UPDATE`,
    values: [vehicleIds],
  });
}

export interface StateChange {
  vehicleId: string;
  /** A value changed, not only a time: the vehicle's updated_at moves. */
  valueChanged: boolean;
  /** The samples that replaced stored ones (newer), to patch the read model with. */
  written: LatestSample[];
}

/**
 * Upserts the newest sample per vehicle and signal; a sample older than the stored one never
 * overwrites it (out-of-order arrival). Returns the vehicles whose state moved.
 *
 * A sample taken before the vehicle's current owner got it from a previous owner
 * (db/ownership.ts `ownedSinceSql`) is stored as a reading, for the history report, but never
 * becomes the latest state: the owner's `signals` show only readings of its own span
 * (docs/ownership.md). The odometer is the exception: it travels with the car.
 */
export async function upsertLatestSignals(q: Queryable, latest: readonly LatestSample[]): Promise<StateChange[]> {
  if (latest.length === 0) return [];
  // value_changed_at equals recorded_at exactly when this write changed the value (or created the row).
  // Only keys come back: the values are already here, and decoding them again costs the worker CPU.
  const result = await q.query<{ vehicleId: string; signal: string; valueChanged: boolean }>({
    name: 'upsert-latest-signals',
    text: `INSERT INTO vehicle_signals AS cur (vehicle_id, signal, recorded_at, value, source, value_changed_at)
           SELECT v, s, t, j, o, t FROM json_to_recordset($1::json) AS r(v uuid, s text, t timestamptz, j jsonb, o text)
           WHERE s = ANY($2::text[]) OR t >= coalesce(${ownedSinceSql('r.v')}, '-infinity')
           ORDER BY v, s
           ON CONFLICT (vehicle_id, signal) DO UPDATE
             SET recorded_at = excluded.recorded_at, value = excluded.value, source = excluded.source,
                 value_changed_at = CASE WHEN cur.value IS DISTINCT FROM excluded.value THEN excluded.recorded_at ELSE cur.value_changed_at END
             WHERE excluded.recorded_at > cur.recorded_at
           RETURNING vehicle_id AS "vehicleId", signal, value_changed_at = recorded_at AS "valueChanged"`,
    values: [
      // Times as strings: a Date's toJSON takes V8's JSON.stringify off its fast path (a third slower).
      JSON.stringify(
        latest.map((s) => ({ v: s.vehicleId, s: s.signal, t: s.recordedAt.toISOString(), j: s.value, o: s.source })),
      ),
      odometerSignals,
    ],
  });
  const byKey = new Map(latest.map((sample) => [`${sample.vehicleId}\u0000${sample.signal}`, sample]));
  const changes = new Map<string, StateChange>();
  for (const { vehicleId, signal, valueChanged } of result.rows) {
    const change = changes.get(vehicleId) ?? { vehicleId, valueChanged: false, written: [] };
    change.valueChanged ||= valueChanged;
    change.written.push(byKey.get(`${vehicleId}\u0000${signal}`)!);
    changes.set(vehicleId, change);
  }
  return [...changes.values()].sort((a, b) => (a.vehicleId < b.vehicleId ? -1 : 1));
}

/**
 * When the vehicle changes hands (src/vehicles/vehicle-transfer.ts; docs/ownership.md), its latest
 * state keeps only what the new owner may see: the odometer series (they travel with the car) and
 * samples taken from `since` (the new span's start) on.
 */
export async function dropLatestSignalsBefore(q: Queryable, vehicleId: string, since: Date): Promise<void> {
  await q.query(
    `DELETE FROM vehicle_signals WHERE vehicle_id = $1 AND signal <> ALL ($2::text[]) AND recorded_at < $3`,
    [vehicleId, odometerSignals, since],
  );
}

/**
 * The read model's side of dropLatestSignalsBefore: `signals` keep the odometer and the values
 * observed from `since` on (each key's time is under `observed_at`), `as_of` becomes the newest
 * time kept, and `health` starts over (the transfer evaluates the new span at once).
 */
export async function dropReadModelBefore(q: Queryable, vehicleId: string, since: Date): Promise<void> {
  await q.query(
    `WITH current AS (SELECT signals FROM vehicles WHERE id = $1),
     observed AS (
       SELECT o.key, o.value FROM current CROSS JOIN jsonb_each(current.signals -> 'observed_at') o
       WHERE o.key = ANY ($2::text[]) OR (o.value #>> '{}')::timestamptz >= $3
     ),
     kept AS (
       SELECT s.key, s.value FROM current CROSS JOIN jsonb_each(current.signals) s
       WHERE s.key = 'odometer' OR s.key IN (SELECT key FROM observed WHERE key <> ALL ($2::text[]))
     )
     UPDATE vehicles SET
       signals = (SELECT coalesce(jsonb_object_agg(key, value), '{}') FROM kept)
         || coalesce((SELECT jsonb_build_object('observed_at', jsonb_object_agg(key, value)) FROM observed HAVING count(*) > 0), '{}'),
       as_of = (SELECT max((value #>> '{}')::timestamptz) FROM observed),
       health = DEFAULT,
       updated_at = clock_timestamp()
     WHERE id = $1`,
    [vehicleId, odometerSignals, since],
  );
}

/**
 * Patches `signals` of the vehicles whose state moved with the samples that won, advances as_of
 * and the ECU odometer time, and moves updated_at only where a value changed (a repeated value
 * refreshes times silently). The odometer is replaced only by a newer one (ISO texts compare in
 * time order).
 */
export async function applyVehicleState(
  q: Queryable,
  changes: readonly StateChange[],
  summaries: ReadonlyMap<string, VehicleSummary>,
): Promise<void> {
  if (changes.length === 0) return;
  const patches = new Map(readModelPatches(changes.flatMap((c) => c.written)).map((p) => [p.vehicleId, p]));
  await q.query({
    name: 'apply-vehicle-state',
    text: `UPDATE vehicles v SET
             signals = v.signals || c.signals
               || jsonb_build_object('observed_at', coalesce(v.signals -> 'observed_at', '{}'::jsonb) || c.observed_at)
               || CASE WHEN c.odometer IS NOT NULL
                        AND (v.signals -> 'odometer' IS NULL OR v.signals -> 'odometer' ->> 'as_of' <= c.odometer ->> 'as_of')
                       THEN jsonb_build_object('odometer', c.odometer) ELSE '{}'::jsonb END,
             as_of = greatest(v.as_of, c.newest_at),
             ecu_odometer_at = greatest(v.ecu_odometer_at, c.ecu_odometer_at),
             updated_at = CASE WHEN c.value_changed THEN clock_timestamp() ELSE v.updated_at END
           FROM unnest($1::uuid[], $2::boolean[], $3::timestamptz[], $4::timestamptz[], $5::jsonb[], $6::jsonb[], $7::jsonb[])
             AS c(vehicle_id, value_changed, newest_at, ecu_odometer_at, signals, observed_at, odometer)
           WHERE v.id = c.vehicle_id`,
    values: [
      changes.map((c) => c.vehicleId),
      changes.map((c) => c.valueChanged),
      changes.map((c) => summaries.get(c.vehicleId)?.newestAt ?? null),
      changes.map((c) => summaries.get(c.vehicleId)?.ecuOdometerAt ?? null),
      changes.map((c) => JSON.stringify(patches.get(c.vehicleId)?.signals ?? {})),
      changes.map((c) => JSON.stringify(patches.get(c.vehicleId)?.observedAt ?? {})),
      changes.map((c) => {
        const odometer = patches.get(c.vehicleId)?.odometer;
        return odometer ? JSON.stringify(odometer) : null;
      }),
    ],
  });
}

/**
 * Stores provider events (a repeat adds nothing) and counts the stored harsh braking and
 * acceleration events into the history rollup driving_daily (db/history-rollups.ts); answers the
 * vehicles that got an event not stored before.
 */
export async function insertVehicleEvents(q: Queryable, events: readonly EventRow[]): Promise<string[]> {
  if (events.length === 0) return [];
  const result = await q.query<{ vehicleId: string }>({
    name: 'insert-vehicle-events',
    text: `WITH stored AS (
             INSERT INTO vehicle_events (vehicle_id, kind, recorded_at, g, source, without_cascade)
             SELECT * FROM unnest($1::uuid[], $2::text[], $3::timestamptz[], $4::float8[], $5::text[], $6::boolean[])
             ON CONFLICT DO NOTHING
             RETURNING vehicle_id, kind, recorded_at
           ),
           harsh AS (
             INSERT INTO driving_daily AS d (vehicle_id, day, hard_brakes, hard_accels)
             SELECT vehicle_id, (recorded_at AT TIME ZONE 'UTC')::date,
                    count(*) FILTER (WHERE kind = 'hard_brake'), count(*) FILTER (WHERE kind = 'hard_accel')
             FROM stored WHERE kind IN ('hard_brake', 'hard_accel')
             GROUP BY 1, 2 ORDER BY 1, 2
             ON CONFLICT (vehicle_id, day) DO UPDATE SET
               hard_brakes = d.hard_brakes + excluded.hard_brakes, hard_accels = d.hard_accels + excluded.hard_accels
           )
           SELECT vehicle_id AS "vehicleId" FROM stored`,
    values: [
      events.map((e) => e.vehicleId),
      events.map((e) => e.kind),
      events.map((e) => e.recordedAt),
      events.map((e) => e.g),
      events.map((e) => e.source),
      events.map((e) => (e.withoutCascade ? true : null)),
    ],
  });
  return [...new Set(result.rows.map((row) => row.vehicleId))];
}

export async function recordUnmappedSamples(
  q: Queryable,
  connectionId: string,
  counts: readonly UnmappedCount[],
): Promise<void> {
  if (counts.length === 0) return;
  await q.query({
    name: 'record-unmapped-samples',
    text: `INSERT INTO unmapped_vehicles AS u (connection_id, provider_vehicle_id, first_seen_at, last_seen_at, samples_count)
           SELECT $1, * FROM unnest($2::text[], $3::timestamptz[], $4::timestamptz[], $5::bigint[])
           ON CONFLICT (connection_id, provider_vehicle_id) DO UPDATE SET
             first_seen_at = least(u.first_seen_at, excluded.first_seen_at),
             last_seen_at = greatest(u.last_seen_at, excluded.last_seen_at),
             samples_count = u.samples_count + excluded.samples_count`,
    values: [
      connectionId,
      counts.map((c) => c.providerVehicleId),
      counts.map((c) => c.firstSeenAt),
      counts.map((c) => c.lastSeenAt),
      counts.map((c) => c.samples),
    ],
  });
}

export interface UnmappedVehicle {
  providerVehicleId: string;
  firstSeenAt: Date;
  lastSeenAt: Date;
  samplesCount: number;
}

export async function listUnmappedVehicles(q: Queryable, connectionId: string): Promise<UnmappedVehicle[]> {
  const result = await q.query<UnmappedVehicle>(
    `SELECT provider_vehicle_id AS "providerVehicleId", first_seen_at AS "firstSeenAt", last_seen_at AS "lastSeenAt",
            samples_count AS "samplesCount"
     FROM unmapped_vehicles WHERE connection_id = $1 ORDER BY last_seen_at DESC`,
    [connectionId],
  );
  return result.rows;
}
