import { rolledUpSignals } from './history-rollups.js';
import type { Queryable } from './pool.js';

export interface ReadingRow {
  vehicleId: string;
  signal: string;
  recordedAt: Date;
  valueNum: number | null;
  valueJson: unknown;
  source: string;
}

/** What a batch stored: the count, and the stored readings the history rollups are made of. */
export interface StoredReadings {
  count: number;
  /**
   * The newly stored readings of the rolled-up signals as one JSON document, handed unparsed to
   * upsertReadingRollups (decoding it here would cost the ingest worker CPU for nothing); null
   * when there are none. Only stored rows count, so a repeated sample adds nothing to a rollup.
   */
  rollupJson: string | null;
}

/**
 * Inserts a batch in one statement; a sample already stored (same vehicle, signal, time) is
 * skipped. The batch travels as one JSON document: serializing it is native in V8, where pg's
 * array literals escape every element in JavaScript (a sixth of the ingest worker's CPU).
 */
export async function insertReadings(q: Queryable, rows: readonly ReadingRow[]): Promise<StoredReadings> {
  if (rows.length === 0) return { count: 0, rollupJson: null };
  const result = await q.query<StoredReadings>({
    name: 'insert-readings',
    text: `WITH stored AS (
             INSERT INTO readings (vehicle_id, signal, recorded_at, value_num, value_json, source)
             SELECT v, s, t, n, j, o FROM json_to_recordset($1::json) AS r(v uuid, s text, t timestamptz, n float8, j jsonb, o text)
             ON CONFLICT DO NOTHING
             RETURNING vehicle_id, signal, recorded_at, value_num, value_json, source
           )
           SELECT count(*)::int AS count,
                  json_agg(json_build_object('v', vehicle_id, 's', signal, 't', recorded_at, 'n', value_num, 'j', value_json, 'o', source))
                    FILTER (WHERE signal = ANY($2::text[]))::text AS "rollupJson"
           FROM stored`,
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
      rolledUpSignals,
    ],
  });
  return result.rows[0]!;
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
