/**
 * Statements of the ingest path: vehicle mapping, latest state (in the vehicle row), events, unmapped counts.
 *
 * Lock order, one order in every transaction that writes a vehicle's state (ingest, the manual
 * odometer of PUT /vehicles/{id}, operator PATCH, health evaluation, service requests and runs),
 * so two writers of one vehicle wait for each other instead of deadlocking:
 *   1. `vehicles` rows, in id order (FOR NO KEY UPDATE: foreign-key checks of rows that reference
 *      the vehicle are not blocked);
 *   2. then the vehicle's other rows: `runs`, `vehicle_health_state` and the history rollups
 *      (`odometer_daily`, `driving_daily`).
 * `readings` take no part: their inserts lock no vehicle row and run in parallel.
 */
import { foldLatestState, type LatestStatePatch, type StoredLatestState } from '../domain/latest-state.js';
import { odometerSignals, type LatestSample } from '../domain/sample.js';
import { ownedSinceSql } from './ownership.js';
import type { Queryable } from './pool.js';

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

/**
 * Writes the newest sample of each vehicle and signal into the vehicle row, one write per vehicle
 * for the whole batch, and answers the vehicles whose state moved. Newer wins per signal against
 * the locked row (domain/latest-state.ts folds the batch into one patch per vehicle):
 * `signals.observed_at` holds each signal's time, so a sample older than the stored one never
 * overwrites it (out-of-order arrival) and a replay changes nothing.
 *
 * What a winning sample writes (the read model, docs/api.md): its time under `observed_at`; a
 * scalar by value and an object with its own `as_of`; the odometer series' values only into
 * `odometer_values` (they decide whether a value changed), and `odometer` ({km, as_of, source}) only
 * from a manual reading newer than the stored one: a provider's odometer becomes the vehicle's
 * through the health stage's link rule, so a reading that contradicts the trusted odometer never
 * does (src/health/rules/link-broken.ts). No sample is named like those two fields of the read
 * model (`readModelFields`, enforced by sanitize.ts). `as_of` and the ECU odometer time advance to
 * the batch's newest sample of the vehicle; `updated_at` moves only where a value changed (an
 * object compared without its `as_of`), so a repeated value refreshes times silently.
 *
 * A sample taken before the vehicle's current owner got it from a previous owner
 * (db/ownership.ts `ownedSinceSql`) is stored as a reading, for the history report, but never
 * becomes the latest state: the owner's `signals` show only readings of its own span
 * (docs/ownership.md). The odometer is the exception: it travels with the car.
 */
export async function writeLatestState(q: Queryable, latest: readonly LatestSample[]): Promise<string[]> {
  if (latest.length === 0) return [];
  // The rows are locked (lockVehiclesForState, lockVehicle): what is read here is what is updated.
  const stored = await loadStoredLatestState(q, [...new Set(latest.map((s) => s.vehicleId))]);
  const patches = foldLatestState(latest, stored);
  await applyLatestStatePatches(q, patches);
  return patches.map((p) => p.vehicleId);
}

/** What the latest state's fold reads of each (locked) vehicle row. */
async function loadStoredLatestState(
  q: Queryable,
  vehicleIds: readonly string[],
): Promise<Map<string, StoredLatestState>> {
  const result = await q.query<{
    id: string;
    signals: Record<string, unknown>;
    odometerValues: Record<string, unknown>;
    ownedSinceMs: string | null;
  }>({
    name: 'load-stored-latest-state',
    // The owner's span start in whole milliseconds rounded up: sample times are whole milliseconds.
    text: `SELECT ve.id, ve.signals, ve.odometer_values AS "odometerValues",
                  ceil(extract(epoch FROM ${ownedSinceSql('ve.id')}) * 1000) AS "ownedSinceMs"
           FROM vehicles ve WHERE ve.id = ANY($1::uuid[])`,
    values: [vehicleIds],
  });
  return new Map(
    result.rows.map((row) => [
      row.id,
      {
        signals: row.signals,
        odometerValues: row.odometerValues,
        ownedSinceMs: row.ownedSinceMs === null ? null : Number(row.ownedSinceMs),
      },
    ]),
  );
}

/** One update per vehicle whose state moves: its patch merged into `signals` and `odometer_values`. */
async function applyLatestStatePatches(q: Queryable, patches: readonly LatestStatePatch[]): Promise<void> {
  if (patches.length === 0) return;
  await q.query({
    name: 'apply-latest-state-patches',
    text: `UPDATE vehicles v SET
             signals = v.signals || p.signals
               || jsonb_build_object('observed_at', coalesce(v.signals -> 'observed_at', '{}'::jsonb) || p.observed_at),
             odometer_values = v.odometer_values || p.odometer_values,
             as_of = greatest(v.as_of, p.newest_at),
             ecu_odometer_at = greatest(v.ecu_odometer_at, p.ecu_odometer_at),
             updated_at = CASE WHEN p.value_changed THEN clock_timestamp() ELSE v.updated_at END
           FROM json_to_recordset($1::json) AS p(v uuid, signals jsonb, observed_at jsonb, odometer_values jsonb,
                                                 newest_at timestamptz, ecu_odometer_at timestamptz, value_changed boolean)
           WHERE v.id = p.v`,
    values: [
      JSON.stringify(
        patches.map((p) => ({
          v: p.vehicleId,
          signals: p.signals,
          observed_at: p.observedAt,
          odometer_values: p.odometerValues,
          newest_at: p.newestAt,
          ecu_odometer_at: p.ecuOdometerAt,
          value_changed: p.valueChanged,
        })),
      ),
    ],
  });
}

/**
 * When the vehicle changes hands (src/vehicles/vehicle-transfer.ts; docs/ownership.md), its read
 * model keeps only what the new owner may see: `signals` keep the odometer and the values observed
 * from `since` (the new span's start) on (each key's time is under `observed_at`; the odometer
 * series' times and `odometer_values` travel with the car), `as_of` becomes the newest time kept,
 * and `health` starts over (the transfer evaluates the new span at once).
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
