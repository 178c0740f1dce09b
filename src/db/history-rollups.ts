/**
 * The history report's rollups (migration 0015, docs/history-report.md), advanced at ingest by one
 * statement per batch from the readings and events the batch actually stored, so a repeated
 * payload adds nothing and a report never scans raw readings.
 *
 * - odometer_daily: per vehicle, UTC day, odometer signal and source, the first, last, lowest and
 *   highest reading. Merging keeps the earliest first and the latest last, so the order in which
 *   batches arrive does not matter.
 * - driving_daily: speed samples (moving, at highway speed, the sum of moving speeds), trips
 *   started and the provider's harsh braking and acceleration events.
 *
 * Both are "other rows" of a vehicle in the lock order of db/vehicle-state.ts: written only after
 * the batch's vehicle rows are locked.
 */
import type { Queryable } from './pool.js';

/** The signals the rollups are made of; insertReadings hands back the stored ones. */
export const rolledUpSignals = ['odometer_km', 'gps_odometer_km', 'speed_kph', 'engine_state'];

/** A speed sample counts as moving at 8 km/h or more (5 mph, Samsara's trip threshold). */
export const movingKph = 8;
/** Highway speed: 88 km/h (55 mph) or more. */
export const highwayKph = 88;

/**
 * Folds newly stored readings (insertReadings' rollupJson) into both rollups. A trip starts at an
 * engine state of on or idle whose previous stored engine state (the batch's own included) is off
 * or absent.
 */
export async function upsertReadingRollups(q: Queryable, rollupJson: string | null): Promise<void> {
  if (rollupJson === null) return;
  await q.query({
    name: 'upsert-reading-rollups',
    text: `WITH r AS (
             SELECT v, s, t, n, j, o, (t AT TIME ZONE 'UTC')::date AS day
             FROM json_to_recordset($1::json) AS r(v uuid, s text, t timestamptz, n float8, j jsonb, o text)
           ),
           odometer AS (
             INSERT INTO odometer_daily AS d (vehicle_id, day, signal, source, first_at, first_km, last_at, last_km, min_km, max_km, readings)
             SELECT v, day, s, o, min(t), (array_agg(n ORDER BY t))[1], max(t), (array_agg(n ORDER BY t DESC))[1], min(n), max(n), count(*)
             FROM r WHERE s IN ('odometer_km', 'gps_odometer_km') AND n IS NOT NULL
             GROUP BY v, day, s, o ORDER BY v, day, s, o
             ON CONFLICT (vehicle_id, day, signal, source) DO UPDATE SET
               first_at = least(d.first_at, excluded.first_at),
               first_km = CASE WHEN excluded.first_at < d.first_at THEN excluded.first_km ELSE d.first_km END,
               last_at = greatest(d.last_at, excluded.last_at),
               last_km = CASE WHEN excluded.last_at > d.last_at THEN excluded.last_km ELSE d.last_km END,
               min_km = least(d.min_km, excluded.min_km),
               max_km = greatest(d.max_km, excluded.max_km),
               readings = d.readings + excluded.readings
           ),
           trips AS (
             SELECT v, day FROM r
             WHERE s = 'engine_state' AND j #>> '{}' IN ('on', 'idle')
               AND coalesce((SELECT p.value_json #>> '{}' FROM readings p
                             WHERE p.vehicle_id = r.v AND p.signal = 'engine_state' AND p.recorded_at < r.t
                             ORDER BY p.recorded_at DESC LIMIT 1), 'off') = 'off'
           ),
           driving AS (
             SELECT v, day, count(*) FILTER (WHERE s = 'speed_kph') AS speed_samples,
                    count(*) FILTER (WHERE s = 'speed_kph' AND n >= $2) AS moving_samples,
                    count(*) FILTER (WHERE s = 'speed_kph' AND n >= $3) AS highway_samples,
                    coalesce(sum(n) FILTER (WHERE s = 'speed_kph' AND n >= $2), 0) AS moving_kph_sum,
                    0 AS trips
             FROM r WHERE s = 'speed_kph' AND n >= 0 GROUP BY v, day
             UNION ALL
             SELECT v, day, 0, 0, 0, 0, count(*) FROM trips GROUP BY v, day
           )
           INSERT INTO driving_daily AS d (vehicle_id, day, speed_samples, moving_samples, highway_samples, moving_kph_sum, trips)
           SELECT v, day, sum(speed_samples), sum(moving_samples), sum(highway_samples), sum(moving_kph_sum), sum(trips)
           FROM driving GROUP BY v, day ORDER BY v, day
           ON CONFLICT (vehicle_id, day) DO UPDATE SET
             speed_samples = d.speed_samples + excluded.speed_samples,
             moving_samples = d.moving_samples + excluded.moving_samples,
             highway_samples = d.highway_samples + excluded.highway_samples,
             moving_kph_sum = d.moving_kph_sum + excluded.moving_kph_sum,
             trips = d.trips + excluded.trips`,
    values: [rollupJson, movingKph, highwayKph],
  });
}
