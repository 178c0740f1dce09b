import { copyField, copyFromText } from './copy-text.js';
import { keysetPageSql } from './keyset-page-sql.js';
import type { PoolClient, Queryable } from './pool.js';

/** One public-API request as the Requests page shows it; nothing of its query, headers or body. */
export interface ApiRequestRow {
  companyId: string;
  requestedAt: Date;
  method: string;
  /** Without the query string. */
  path: string;
  status: number;
  durationMs: number;
  apiKeyId: string;
  keyPrefix: string;
}

export interface ApiRequestRecord extends Omit<ApiRequestRow, 'companyId'> {
  id: string;
}

/** A filter of the Requests page: a status class (2 for 2xx…) and one key, each optional. */
export interface ApiRequestFilter {
  statusClass: number | null;
  apiKeyId: string | null;
}

/**
 * Writes a batch of rows with one COPY: about half the Postgres CPU per row of an INSERT fed
 * from a JSON document or arrays (docs/performance.md "The request log's cost"). Resolves with
 * Postgres' error when it refused the batch (a day without a partition); the transaction is then
 * aborted.
 */
export function copyApiRequests(client: PoolClient, rows: readonly ApiRequestRow[]): Promise<Error | null> {
  let text = '';
  for (const r of rows) {
    text += `${r.companyId}\t${r.requestedAt.toISOString()}\t${r.method}\t${copyField(r.path)}\t${r.status}\t${r.durationMs}\t${r.apiKeyId}\t${copyField(r.keyPrefix)}\n`;
  }
  return copyFromText(
    client,
    'COPY api_request_log (company_id, requested_at, method, path, status, duration_ms, api_key_id, key_prefix) FROM STDIN',
    text,
  );
}

/**
 * Up to `limit` of the company's requests since `since` next to the cursor row (its time and
 * id), newest first: older ones for 'next', newer ones for 'previous' (the newest when the cursor
 * is null), through api_request_log_company_page or, for one key, api_request_log_company_key.
 */
export async function listApiRequests(
  q: Queryable,
  companyId: string,
  filter: ApiRequestFilter,
  since: Date,
  direction: 'next' | 'previous',
  cursor: { requestedAt: Date; id: string } | null,
  limit: number,
): Promise<ApiRequestRecord[]> {
  const result = await q.query<ApiRequestRecord>(
    keysetPageSql(
      {
        table: 'api_request_log',
        matching: `company_id = $1 AND requested_at >= $2
          AND ($3::int IS NULL OR status / 100 = $3::int) AND ($4::uuid IS NULL OR api_key_id = $4::uuid)`,
        time: 'requested_at',
        id: 'id',
        idType: 'bigint',
        firstParam: 5,
      },
      `id::text, requested_at AS "requestedAt", method, path, status, duration_ms AS "durationMs",
       api_key_id AS "apiKeyId", key_prefix AS "keyPrefix"`,
    ),
    [
      companyId,
      since,
      filter.statusClass,
      filter.apiKeyId,
      direction,
      cursor?.requestedAt ?? null,
      cursor?.id ?? null,
      limit,
    ],
  );
  return result.rows;
}

/**
 * Makes sure daily partitions exist from yesterday to a week ahead, so a week without the daily
 * job still finds one for every request. Serialized like the readings partitions.
 */
export async function ensureApiRequestLogPartitions(q: Queryable, now: Date): Promise<number> {
  const yesterday = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - 1));
  const result = await q.query<{ created: number }>(
    `WITH locked AS (SELECT pg_advisory_xact_lock(hashtextextended('api_request_log partitions', 0)))
     SELECT ensure_api_request_log_partitions($1::date, 9) AS created FROM locked`,
    [yesterday.toISOString().slice(0, 10)],
  );
  return result.rows[0]!.created;
}

/** The daily partitions of `api_request_log`, by name and day (YYYY-MM-DD). */
export async function listApiRequestLogPartitions(q: Queryable): Promise<Array<{ name: string; day: string }>> {
  const { rows } = await q.query<{ name: string; day: string }>(
    `SELECT c.relname AS name, replace(substr(c.relname, 17), '_', '-') AS day
       FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'api_request_log'::regclass AND c.relname ~ '^api_request_log_[0-9]{4}_[0-9]{2}_[0-9]{2}$'
      ORDER BY c.relname`,
  );
  return rows;
}

/** Detaches and drops one daily partition: its rows go at once, without a DELETE or vacuum. */
export async function dropApiRequestLogPartition(q: Queryable, name: string): Promise<void> {
  if (!/^api_request_log_\d{4}_\d{2}_\d{2}$/.test(name)) throw new Error(`not an api_request_log partition: ${name}`);
  await q.query(`ALTER TABLE api_request_log DETACH PARTITION ${name}`);
  await q.query(`DROP TABLE ${name}`);
}
