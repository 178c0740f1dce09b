import type { Queryable } from './pool.js';

export interface InboxRow {
  id: number;
  connectionId: string;
  provider: string;
  receivedAt: Date;
  contentType: string | null;
  payload: string;
  cascade: boolean;
  refreshId: string | null;
  processedAt: Date | null;
}

const inboxColumns = `id, connection_id AS "connectionId", provider, received_at AS "receivedAt", content_type AS "contentType",
  payload, cascade, refresh_id AS "refreshId", processed_at AS "processedAt"`;

export interface NewInboxRow {
  connectionId: string;
  provider: string;
  contentType: string | null;
  payload: string;
  cascade: boolean;
  refreshId: string | null;
}

export async function insertInboxRow(q: Queryable, row: NewInboxRow): Promise<{ id: number; receivedAt: Date }> {
  const result = await q.query<{ id: number; receivedAt: Date }>({
    name: 'insert-inbox-row',
    text: `INSERT INTO ingest_inbox (connection_id, provider, content_type, payload, cascade, refresh_id)
           VALUES ($1, $2, $3, $4, $5, $6) RETURNING id, received_at AS "receivedAt"`,
    values: [row.connectionId, row.provider, row.contentType, row.payload, row.cascade, row.refreshId],
  });
  return result.rows[0]!;
}

/**
 * Locks one inbox row for processing. SKIP LOCKED: a row another worker is processing is not
 * waited for (that worker owns it); `includeProcessed` re-processes a finished row (replay).
 */
export async function lockInboxRow(q: Queryable, id: number, includeProcessed: boolean): Promise<InboxRow | null> {
  const result = await q.query<InboxRow>({
    name: includeProcessed ? 'lock-inbox-row-any' : 'lock-inbox-row-pending',
    text: `SELECT ${inboxColumns} FROM ingest_inbox WHERE id = $1 ${includeProcessed ? '' : 'AND processed_at IS NULL'}
           FOR UPDATE SKIP LOCKED`,
    values: [id],
  });
  return result.rows[0] ?? null;
}

export interface InboxOutcome {
  samples: number;
  skipped: number;
  unmapped: number;
  error: string | null;
}

export async function markInboxProcessed(q: Queryable, id: number, outcome: InboxOutcome): Promise<void> {
  await q.query({
    name: 'mark-inbox-processed',
    text: `UPDATE ingest_inbox SET processed_at = clock_timestamp(), samples_count = $2, skipped_count = $3,
             unmapped_count = $4, error = $5
           WHERE id = $1`,
    values: [id, outcome.samples, outcome.skipped, outcome.unmapped, outcome.error],
  });
}

/** Rows still owed processing and received before `before` (the recovery sweep re-enqueues them). */
export async function listPendingInboxIds(q: Queryable, before: Date, limit: number): Promise<number[]> {
  const result = await q.query<{ id: number }>(
    `SELECT id FROM ingest_inbox WHERE processed_at IS NULL AND received_at < $1 ORDER BY id LIMIT $2`,
    [before, limit],
  );
  return result.rows.map((r) => r.id);
}

/** Inbox ids received since `since` (optionally of one provider), after `afterId`, for replay in pages. */
export async function listInboxIdsSince(
  q: Queryable,
  since: Date,
  provider: string | null,
  afterId: number,
  limit: number,
): Promise<number[]> {
  const result = await q.query<{ id: number }>(
    `SELECT id FROM ingest_inbox
     WHERE received_at >= $1 AND ($2::text IS NULL OR provider = $2) AND id > $3
     ORDER BY id LIMIT $4`,
    [since, provider, afterId, limit],
  );
  return result.rows.map((r) => r.id);
}

export async function countInboxSince(q: Queryable, since: Date, provider: string | null): Promise<number> {
  const result = await q.query<{ n: number }>(
    `SELECT count(*) AS n FROM ingest_inbox WHERE received_at >= $1 AND ($2::text IS NULL OR provider = $2)`,
    [since, provider],
  );
  return result.rows[0]!.n;
}
