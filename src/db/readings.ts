import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import copyStreams from 'pg-copy-streams';
import { highwayKph, movingKph } from './history-rollups.js';
import type { PoolClient, Queryable } from './pool.js';

export interface ReadingRow {
  vehicleId: string;
  signal: string;
  recordedAt: Date;
  valueNum: number | null;
  valueJson: unknown;
  source: string;
  /** Stored by a refresh without cascade (migrations/0027): the link rule reads it, the alert rules and detectors never. */
  withoutCascade?: boolean;
}

/** What a batch stored: the count, and what the history rollups gain from it. */
export interface StoredReadings {
  count: number;
  /**
   * The history rollups' share of the newly stored readings, already aggregated per vehicle and
   * day (db/history-rollups.ts), as JSON handed unparsed to upsertReadingRollups; null when the
   * batch stored none of the rolled-up signals. Only stored rows count, so a repeated sample adds
   * nothing to a rollup.
   */
  rollupJson: string | null;
}

/**
 * The history rollups' terms of the readings in `stored` (columns v, s, t, n, j, o): odometer
 * first/last/low/high per vehicle, day, signal and source; speed samples per vehicle and day;
 * trips started per vehicle and day. A trip starts at an engine state of on or idle whose previous
 * engine state is off or absent: the previous stored one in the batch, or for a vehicle's first in
 * the batch the vehicle's latest state before the batch (vehicle_signals: one key lookup, where the
 * readings table would need one per partition; a batch older than the latest state counts no trip
 * for its first reading). Run before the batch's latest state is written.
 */
const rollupTermsSql = `rolled AS (
             SELECT v, s, t, n, j, o, (t AT TIME ZONE 'UTC')::date AS day FROM stored
             WHERE s IN ('odometer_km', 'gps_odometer_km', 'speed_kph', 'engine_state')
           ),
           odometer AS (
             SELECT v, day, s, o, min(t) AS first_at, (array_agg(n ORDER BY t))[1] AS first_km,
                    max(t) AS last_at, (array_agg(n ORDER BY t DESC))[1] AS last_km, min(n) AS min_km, max(n) AS max_km,
                    count(*) AS readings
             FROM rolled WHERE s IN ('odometer_km', 'gps_odometer_km') AND n IS NOT NULL GROUP BY v, day, s, o
           ),
           speed AS (
             SELECT v, day, count(*) AS speed_samples, count(*) FILTER (WHERE n >= $2) AS moving_samples,
                    count(*) FILTER (WHERE n >= $3) AS highway_samples,
                    coalesce(sum(n) FILTER (WHERE n >= $2), 0) AS moving_kph_sum
             FROM rolled WHERE s = 'speed_kph' AND n >= 0 GROUP BY v, day
           ),
           engine AS (
             SELECT v, day, t, j #>> '{}' AS state, lag(j #>> '{}') OVER (PARTITION BY v ORDER BY t) AS previous,
                    row_number() OVER (PARTITION BY v ORDER BY t) AS nth
             FROM rolled WHERE s = 'engine_state'
           ),
           trips AS (
             SELECT v, day, count(*) AS trips FROM engine e
             WHERE state IN ('on', 'idle')
               AND CASE WHEN nth > 1 THEN previous = 'off'
                        ELSE coalesce((SELECT CASE WHEN l.recorded_at < e.t THEN l.value #>> '{}' ELSE 'unknown' END FROM vehicle_signals l
                                       WHERE l.vehicle_id = e.v AND l.signal = 'engine_state'), 'off') = 'off' END
             GROUP BY v, day
           )
           SELECT (SELECT count(*)::int FROM stored) AS count,
                  CASE WHEN EXISTS (SELECT FROM rolled)
                       THEN json_build_object('odometer', (SELECT coalesce(json_agg(x), '[]') FROM odometer x),
                                              'speed', (SELECT coalesce(json_agg(x), '[]') FROM speed x),
                                              'trips', (SELECT coalesce(json_agg(x), '[]') FROM trips x))::text END AS "rollupJson"`;

/** The signals the history rollups read (rollupTermsSql). */
const rolledSignals: ReadonlySet<string> = new Set(['odometer_km', 'gps_odometer_km', 'speed_kph', 'engine_state']);

function readingsJson(rows: readonly ReadingRow[]): string {
  return JSON.stringify(
    rows.map((r) => ({
      v: r.vehicleId,
      s: r.signal,
      t: r.recordedAt,
      n: r.valueNum,
      j: r.valueJson ?? null,
      o: r.source,
      ...(r.withoutCascade ? { c: true } : {}),
    })),
  );
}

/**
 * Inserts a batch in one statement; a sample already stored (same vehicle, signal, time) is
 * skipped. The batch travels as one JSON document: serializing it is native in V8, where pg's
 * array literals escape every element in JavaScript (a sixth of the ingest worker's CPU).
 *
 * The same statement sums what it stored into the rollups' terms (rollupTermsSql; the rollup rows
 * themselves are written after the vehicle rows are locked).
 */
export async function insertReadings(q: Queryable, rows: readonly ReadingRow[]): Promise<StoredReadings> {
  if (rows.length === 0) return { count: 0, rollupJson: null };
  const result = await q.query<StoredReadings>({
    name: 'insert-readings',
    text: `WITH stored AS (
             INSERT INTO readings (vehicle_id, signal, recorded_at, value_num, value_json, source, without_cascade)
             SELECT v, s, t, n, j, o, c FROM json_to_recordset($1::json) AS r(v uuid, s text, t timestamptz, n float8, j jsonb, o text, c boolean)
             ON CONFLICT DO NOTHING
             RETURNING vehicle_id AS v, signal AS s, recorded_at AS t, value_num AS n, value_json AS j, source AS o
           ),
           ${rollupTermsSql}`,
    values: [readingsJson(rows), movingKph, highwayKph],
  });
  return result.rows[0]!;
}

/**
 * Stores a batch none of whose samples is stored yet by COPY, about half the Postgres time of
 * insertReadings' `INSERT … ON CONFLICT` per row (docs/performance.md, Ingestion). Inside a
 * savepoint: when the COPY fails (a replayed sample hits the primary key, or a repeat inside the
 * batch), it is rolled back and false returned, and the caller stores the batch with
 * insertReadings, which skips the stored samples and reports its own errors.
 */
export async function copyNewReadings(client: PoolClient, rows: readonly ReadingRow[]): Promise<boolean> {
  if (rows.length === 0) return true;
  await client.query('SAVEPOINT copy_readings');
  try {
    await pipeline(
      Readable.from([copyText(rows)]),
      client.query(
        copyStreams.from(
          'COPY readings (vehicle_id, signal, recorded_at, value_num, value_json, source, without_cascade) FROM STDIN',
        ),
      ),
    );
  } catch {
    await client.query('ROLLBACK TO SAVEPOINT copy_readings');
    return false;
  }
  await client.query('RELEASE SAVEPOINT copy_readings');
  return true;
}

/**
 * The rollups' terms (rollupTermsSql) of readings copyNewReadings stored: all of them are new,
 * so only the rolled-up signals travel.
 */
export async function rollupTermsOfNewReadings(q: Queryable, rows: readonly ReadingRow[]): Promise<StoredReadings> {
  const rolled = rows.filter((r) => rolledSignals.has(r.signal));
  if (rolled.length === 0) return { count: rows.length, rollupJson: null };
  const result = await q.query<StoredReadings>({
    name: 'rollup-terms-of-new-readings',
    text: `WITH stored AS (
             SELECT v, s, t, n, j, o FROM json_to_recordset($1::json) AS r(v uuid, s text, t timestamptz, n float8, j jsonb, o text)
           ),
           ${rollupTermsSql}`,
    values: [readingsJson(rolled), movingKph, highwayKph],
  });
  return { count: rows.length, rollupJson: result.rows[0]!.rollupJson };
}

/** COPY text format: tab-separated, \N for NULL, backslash, tab and line breaks escaped. */
function copyText(rows: readonly ReadingRow[]): string {
  let text = '';
  for (const r of rows) {
    const num = r.valueNum !== null && Number.isFinite(r.valueNum) ? String(r.valueNum) : '\\N';
    const json = r.valueJson === null || r.valueJson === undefined ? '\\N' : copyField(JSON.stringify(r.valueJson));
    text += `${r.vehicleId}\t${copyField(r.signal)}\t${r.recordedAt.toISOString()}\t${num}\t${json}\t${copyField(r.source)}\t${r.withoutCascade ? 't' : '\\N'}\n`;
  }
  return text;
}

const copySpecial = /[\\\t\n\r]/;

function copyField(text: string): string {
  return copySpecial.test(text)
    ? text.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'))
    : text;
}

/**
 * Makes sure monthly partitions exist from last month to three months ahead. Serialized by a
 * transaction lock: a starting process and the daily job would otherwise race on CREATE TABLE.
 */
export async function ensureReadingPartitions(q: Queryable, now: Date): Promise<number> {
  const firstMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1));
  const result = await q.query<{ created: number }>(
    `WITH locked AS (SELECT pg_advisory_xact_lock(hashtextextended('readings partitions', 0)))
     SELECT ensure_readings_partitions($1::date, 5) AS created FROM locked`,
    [firstMonth.toISOString().slice(0, 10)],
  );
  return result.rows[0]!.created;
}

/** The monthly partitions of `readings` (not the default one), by name and first day. */
export async function listReadingPartitions(q: Queryable): Promise<Array<{ name: string; month: string }>> {
  const { rows } = await q.query<{ name: string; month: string }>(
    `SELECT c.relname AS name, replace(substr(c.relname, 10), '_', '-') || '-01' AS month
       FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'readings'::regclass AND c.relname ~ '^readings_[0-9]{4}_[0-9]{2}$'
      ORDER BY c.relname`,
  );
  return rows;
}

/** Detaches and drops one monthly partition: its rows go at once, without a DELETE or vacuum. */
export async function dropReadingPartition(q: Queryable, name: string): Promise<void> {
  if (!/^readings_\d{4}_\d{2}$/.test(name)) throw new Error(`not a readings partition: ${name}`);
  await q.query(`ALTER TABLE readings DETACH PARTITION ${name}`);
  await q.query(`DROP TABLE ${name}`);
}
