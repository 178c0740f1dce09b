import type { Queryable } from './pool.js';

export interface ReadingRow {
  vehicleId: string;
  signal: string;
  recordedAt: Date;
  valueNum: number | null;
  valueJson: unknown;
  source: string;
}

/**
 * Inserts a batch in one statement; a sample already stored (same vehicle, signal, time) is
 * skipped. The batch travels as one JSON document: serializing it is native in V8, where pg's
 * array literals escape every element in JavaScript (a sixth of the ingest worker's CPU).
 */
export async function insertReadings(q: Queryable, rows: readonly ReadingRow[]): Promise<number> {
  if (rows.length === 0) return 0;
  const result = await q.query({
    name: 'insert-readings',
    text: `INSERT INTO readings (vehicle_id, signal, recorded_at, value_num, value_json, source)
           SELECT v, s, t, n, j, o FROM json_to_recordset($1::json) AS r(v uuid, s text, t timestamptz, n float8, j jsonb, o text)
           ON CONFLICT DO NOTHING`,
    values: [
      JSON.stringify(
        rows.map((r) => ({
          v: r.vehicleId,
          s: r.signal,
          t: r.recordedAt,
          n: r.valueNum,
          j: r.valueJson ?? null,
          o: r.source,
        })),
      ),
    ],
  });
  return result.rowCount ?? 0;
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
