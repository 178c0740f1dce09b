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
import type { ReadingRow } from './readings.js';

/** A speed sample counts as moving at 8 km/h or more (5 mph, Samsara's trip threshold). */
export const movingKph = 8;
/** Highway speed: 88 km/h (55 mph) or more. */
export const highwayKph = 88;

/** The signals the rollups read. */
export const rolledSignals: ReadonlySet<string> = new Set([
  'odometer_km',
  'gps_odometer_km',
  'speed_kph',
  'engine_state',
]);

interface OdometerTerm {
  v: string;
  day: string;
  s: string;
  o: string;
  first_at: Date;
  first_km: number;
  last_at: Date;
  last_km: number;
  min_km: number;
  max_km: number;
  readings: number;
}

interface SpeedTerm {
  v: string;
  day: string;
  speed_samples: number;
  moving_samples: number;
  highway_samples: number;
  moving_kph_sum: number;
}

/**
 * A batch's share of both rollups, summed in the worker: odometer first/last/low/high per vehicle,
 * UTC day, signal and source; speed samples per vehicle and day; trips started per vehicle and
 * day. A trip starts at an engine state of on or idle whose previous engine state is off or
 * absent: the previous one in the batch, or for a vehicle's first in the batch the vehicle's latest
 * state before the batch, which only the database knows (`first_trips`: counted by
 * upsertReadingRollups when that state is off, absent, or older than the reading).
 */
export function rollupTerms(stored: readonly ReadingRow[]) {
  const odometer = new Map<string, OdometerTerm>();
  const speed = new Map<string, SpeedTerm>();
  const engine = new Map<string, ReadingRow[]>();
  for (const r of stored) {
    const n = r.valueNum;
    if (r.signal === 'speed_kph') {
      if (n === null || !(n >= 0)) continue;
      const day = utcDay(r.recordedAt);
      const key = `${r.vehicleId}/${day}`;
      let term = speed.get(key);
      if (!term) {
        term = { v: r.vehicleId, day, speed_samples: 0, moving_samples: 0, highway_samples: 0, moving_kph_sum: 0 };
        speed.set(key, term);
      }
      term.speed_samples++;
      if (n >= movingKph) {
        term.moving_samples++;
        term.moving_kph_sum += n;
      }
      if (n >= highwayKph) term.highway_samples++;
    } else if (r.signal === 'engine_state') {
      const list = engine.get(r.vehicleId);
      if (list) list.push(r);
      else engine.set(r.vehicleId, [r]);
    } else if (r.signal === 'odometer_km' || r.signal === 'gps_odometer_km') {
      if (n === null) continue;
      const t = r.recordedAt;
      const day = utcDay(t);
      const key = `${r.vehicleId}/${day}/${r.signal}/${r.source}`;
      const term = odometer.get(key);
      if (!term) {
        odometer.set(key, {
          v: r.vehicleId,
          day,
          s: r.signal,
          o: r.source,
          first_at: t,
          first_km: n,
          last_at: t,
          last_km: n,
          min_km: n,
          max_km: n,
          readings: 1,
        });
        continue;
      }
      if (t < term.first_at) [term.first_at, term.first_km] = [t, n];
      if (t > term.last_at) [term.last_at, term.last_km] = [t, n];
      if (n < term.min_km) term.min_km = n;
      if (n > term.max_km) term.max_km = n;
      term.readings++;
    }
  }
  const trips = new Map<string, { v: string; day: string; trips: number }>();
  const firstTrips: Array<{ v: string; day: string; t: Date }> = [];
  for (const [vehicleId, states] of engine) {
    states.sort((a, b) => a.recordedAt.getTime() - b.recordedAt.getTime());
    states.forEach((r, i) => {
      if (r.valueJson !== 'on' && r.valueJson !== 'idle') return;
      const day = utcDay(r.recordedAt);
      if (i === 0) {
        firstTrips.push({ v: vehicleId, day, t: r.recordedAt });
        return;
      }
      if (states[i - 1]!.valueJson !== 'off') return;
      const key = `${vehicleId}/${day}`;
      const term = trips.get(key) ?? { v: vehicleId, day, trips: 0 };
      term.trips++;
      trips.set(key, term);
    });
  }
  if (odometer.size + speed.size + trips.size + firstTrips.length === 0) return null;
  return {
    odometer: [...odometer.values()],
    speed: [...speed.values()],
    trips: [...trips.values()],
    first_trips: firstTrips,
  };
}

function utcDay(t: Date): string {
  return t.toISOString().slice(0, 10);
}

/**
 * Adds the share of `stored` (readings the batch stored, of the rolled-up signals) to both
 * rollups, in key order. Run before the batch's latest state is written: a vehicle's first engine
 * state in the batch is compared with the latest state before it (the vehicle row's `signals`: one
 * key lookup, where the readings table would need one per partition; a vehicle that never reported
 * its engine state counts as off; a batch older than the latest state counts no trip for its first
 * reading).
 */
export async function upsertReadingRollups(q: Queryable, stored: readonly ReadingRow[]): Promise<void> {
  const terms = rollupTerms(stored);
  if (terms === null) return;
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
             UNION ALL
             SELECT x.v, x.day, 0, 0, 0, 0, 1 FROM doc, json_to_recordset(doc.d -> 'first_trips') AS x(v uuid, day date, t timestamptz)
             WHERE coalesce((SELECT CASE WHEN (ve.signals -> 'observed_at' ->> 'engine_state')::timestamptz < x.t THEN ve.signals ->> 'engine_state'
                                         WHEN ve.signals -> 'observed_at' ? 'engine_state' THEN 'unknown' END
                             FROM vehicles ve WHERE ve.id = x.v), 'off') = 'off'
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
    values: [JSON.stringify(terms)],
  });
}
