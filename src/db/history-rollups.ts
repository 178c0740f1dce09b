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

/** A speed sample counts as moving at 8 km/h or more (5 mph, Samsara's trip threshold). */
export const movingKph = 8;
/** Highway speed: 88 km/h (55 mph) or more. */
export const highwayKph = 88;

/**
 * Adds a batch's share (insertReadings' rollupJson: odometer, speed and trips already aggregated
 * per vehicle and day) to both rollups, in key order.
 */
export async function upsertReadingRollups(q: Queryable, rollupJson: string | null): Promise<void> {
  if (rollupJson === null) return;
  await q.query({
    name: 'upsert-reading-rollups',
    text: `WITH doc AS (SELECT $1::json AS d),
           odometer AS (
             INSERT INTO odometer_daily AS d (vehicle_id, day, signal, source, first_at, first_km, last_at, last_km, min_km, max_km, readings)
             SELECT x.* FROM doc, json_to_recordset(doc.d -> 'odometer')
               AS x(v uuid, day date, s text, o text, first_at timestamptz, first_km float8, last_at timestamptz,
                    last_km float8, min_km float8, max_km float8, readings int)
             ORDER BY v, day, s, o
             ON CONFLICT (vehicle_id, day, signal, source) DO UPDATE SET
               first_at = least(d.first_at, excluded.first_at),
               first_km = CASE WHEN excluded.first_at < d.first_at THEN excluded.first_km ELSE d.first_km END,
               last_at = greatest(d.last_at, excluded.last_at),
               last_km = CASE WHEN excluded.last_at > d.last_at THEN excluded.last_km ELSE d.last_km END,
               min_km = least(d.min_km, excluded.min_km),
               max_km = greatest(d.max_km, excluded.max_km),
               readings = d.readings + excluded.readings
           ),
           driving AS (
             SELECT x.v, x.day, x.speed_samples, x.moving_samples, x.highway_samples, x.moving_kph_sum, 0 AS trips
             FROM doc, json_to_recordset(doc.d -> 'speed')
               AS x(v uuid, day date, speed_samples int, moving_samples int, highway_samples int, moving_kph_sum float8)
             UNION ALL
             SELECT x.v, x.day, 0, 0, 0, 0, x.trips FROM doc, json_to_recordset(doc.d -> 'trips') AS x(v uuid, day date, trips int)
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
    values: [rollupJson],
  });
}
