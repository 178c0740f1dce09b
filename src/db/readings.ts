import { jsonb, type Queryable } from './pool.js';

export interface ReadingRow {
  vehicleId: string;
  signal: string;
  recordedAt: Date;
  valueNum: number | null;
  valueJson: unknown;
  source: string;
}

/** Inserts a batch in one statement; a sample already stored (same vehicle, signal, time) is skipped. */
export async function insertReadings(q: Queryable, rows: readonly ReadingRow[]): Promise<number> {
  if (rows.length === 0) return 0;
  const result = await q.query({
    name: 'insert-readings',
    text: `INSERT INTO readings (vehicle_id, signal, recorded_at, value_num, value_json, source)
           SELECT * FROM unnest($1::uuid[], $2::text[], $3::timestamptz[], $4::float8[], $5::jsonb[], $6::text[])
           ON CONFLICT DO NOTHING`,
    values: [
      rows.map((r) => r.vehicleId),
      rows.map((r) => r.signal),
      rows.map((r) => r.recordedAt),
      rows.map((r) => r.valueNum),
      rows.map((r) => jsonb(r.valueJson)),
      rows.map((r) => r.source),
    ],
  });
  return result.rowCount ?? 0;
}

/** Makes sure monthly partitions exist from last month to three months ahead. */
export async function ensureReadingPartitions(q: Queryable, now: Date): Promise<number> {
  const firstMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1));
  const result = await q.query<{ created: number }>('SELECT ensure_readings_partitions($1::date, 5) AS created', [
    firstMonth.toISOString().slice(0, 10),
  ]);
  return result.rows[0]!.created;
}
