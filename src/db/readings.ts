import { copyField, copyFromText } from './copy-text.js';
import { rolledSignals } from './history-rollups.js';
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

/** What insertReadings stored. */
export interface StoredReadings {
  count: number;
  /**
   * The stored readings of the signals the history rollups read (db/history-rollups.ts
   * `rolledSignals`): what upsertReadingRollups adds up. A repeated sample is not among them, so
   * it adds nothing.
   */
  rolled: ReadingRow[];
}

function readingsJson(rows: readonly ReadingRow[]): string {
  return JSON.stringify(
    rows.map((r) => ({
      v: r.vehicleId,
      s: r.signal,
      t: r.recordedAt.toISOString(), // a Date's toJSON takes JSON.stringify off its fast path
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
 * array literals escape every element in JavaScript. The stored rows of the rolled-up signals
 * come back as one JSON document too, for the history rollups.
 */
export async function insertReadings(q: Queryable, rows: readonly ReadingRow[]): Promise<StoredReadings> {
  if (rows.length === 0) return { count: 0, rolled: [] };
  const result = await q.query<{ count: number; rolled: string | null }>({
    name: 'insert-readings',
    text: `WITH stored AS (
             INSERT INTO readings (vehicle_id, signal, recorded_at, value_num, value_json, source, without_cascade)
             SELECT v, s, t, n, j, o, c FROM json_to_recordset($1::json) AS r(v uuid, s text, t timestamptz, n float8, j jsonb, o text, c boolean)
             ON CONFLICT DO NOTHING
             RETURNING vehicle_id AS v, signal AS s, recorded_at AS t, value_num AS n, value_json AS j, source AS o
           )
           SELECT (SELECT count(*)::int FROM stored) AS count,
                  (SELECT json_agg(stored)::text FROM stored WHERE s = ANY($2::text[])) AS rolled`,
    values: [readingsJson(rows), [...rolledSignals]],
  });
  const { count, rolled } = result.rows[0]!;
  if (rolled === null) return { count, rolled: [] };
  const stored = JSON.parse(rolled) as Array<{
    v: string;
    s: string;
    t: string;
    n: number | null;
    j: unknown;
    o: string;
  }>;
  return {
    count,
    rolled: stored.map((r) => ({
      vehicleId: r.v,
      signal: r.s,
      recordedAt: new Date(r.t),
      valueNum: r.n,
      valueJson: r.j,
      source: r.o,
    })),
  };
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
  const refused = await copyFromText(
    client,
    'COPY readings (vehicle_id, signal, recorded_at, value_num, value_json, source, without_cascade) FROM STDIN',
    copyText(rows),
  );
  const copied = refused === null;
  await client.query(copied ? 'RELEASE SAVEPOINT copy_readings' : 'ROLLBACK TO SAVEPOINT copy_readings');
  return copied;
}

/**
 * COPY text format: tab-separated, \N for NULL, backslash, tab and line breaks escaped. The
 * samples of one vehicle report share their time and every row its signal and source from a few
 * names, so each time is formatted and each name escaped once (a third less CPU for the encoder).
 */
function copyText(rows: readonly ReadingRow[]): string {
  const escaped = new Map<string, string>();
  const name = (text: string) => {
    let field = escaped.get(text);
    if (field === undefined) escaped.set(text, (field = copyField(text)));
    return field;
  };
  let timeMs = NaN;
  let time = '';
  let text = '';
  for (const r of rows) {
    if (r.recordedAt.getTime() !== timeMs) {
      timeMs = r.recordedAt.getTime();
      time = r.recordedAt.toISOString();
    }
    const num = r.valueNum !== null && Number.isFinite(r.valueNum) ? String(r.valueNum) : '\\N';
    const json = r.valueJson === null || r.valueJson === undefined ? '\\N' : copyField(JSON.stringify(r.valueJson));
    text += `${r.vehicleId}\t${name(r.signal)}\t${time}\t${num}\t${json}\t${name(r.source)}\t${r.withoutCascade ? 't' : '\\N'}\n`;
  }
  return text;
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
