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
 * Locks inbox rows for processing: the given one and, to batch under load, up to `alsoPending`
 * more of the oldest unprocessed rows. SKIP LOCKED: a row another worker holds is that worker's.
 * The batch pick itself does not skip locked rows, so parallel jobs often share the same oldest
 * rows and get fewer extras; measured, picking disjoint batches was no faster (more parallel
 * writers on the same vehicles' latest state);
 * `includeProcessed` re-processes a finished row (replay).
 */
export async function lockInboxRows(q: Queryable, id: number, options: { includeProcessed: boolean; alsoPending: number }): Promise<InboxRow[]> {
  const result = await q.query<InboxRow>({
    name: options.includeProcessed ? 'lock-inbox-rows-any' : 'lock-inbox-rows-pending',
    text: `SELECT ${inboxColumns} FROM ingest_inbox
           WHERE (id = $1 ${options.includeProcessed ? '' : 'AND processed_at IS NULL'})
              OR id IN (SELECT id FROM ingest_inbox WHERE processed_at IS NULL AND id <> $1 ORDER BY id LIMIT $2)
           ORDER BY id
           FOR UPDATE SKIP LOCKED`,
    values: [id, options.alsoPending],
  });
  return result.rows;
}

export interface InboxOutcome {
  samples: number;
  skipped: number;
  unmapped: number;
  error: string | null;
}

export async function markInboxProcessed(q: Queryable, outcomes: ReadonlyArray<InboxOutcome & { inboxId: number }>): Promise<void> {
  await q.query({
    name: 'mark-inbox-processed',
    text: `UPDATE ingest_inbox i SET processed_at = clock_timestamp(), samples_count = o.samples, skipped_count = o.skipped,
             unmapped_count = o.unmapped, error = o.error
           FROM unnest($1::bigint[], $2::int[], $3::int[], $4::int[], $5::text[]) AS o(id, samples, skipped, unmapped, error)
           WHERE i.id = o.id`,
    values: [
      outcomes.map((o) => o.inboxId), outcomes.map((o) => o.samples), outcomes.map((o) => o.skipped),
      outcomes.map((o) => o.unmapped), outcomes.map((o) => o.error),
    ],
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
