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
 * more of the oldest pending rows. SKIP LOCKED: a row another worker holds is that worker's.
 * The batch pick skips locked rows too, so parallel jobs take disjoint full batches; when it did
 * not, a job arriving while others held the oldest rows got only its own row, and with 32 rows
 * per job end-to-end ingest ran at 0.17 of COPY instead of 0.27–0.31 (docs/performance.md).
 * Parked rows are never picked; `includeProcessed` re-processes a finished or parked row (replay).
 */
export async function lockInboxRows(
  q: Queryable,
  id: number,
  options: { includeProcessed: boolean; alsoPending: number },
): Promise<InboxRow[]> {
  const result = await q.query<InboxRow>({
    name: options.includeProcessed ? 'lock-inbox-rows-any' : 'lock-inbox-rows-pending',
    text: `SELECT ${inboxColumns} FROM ingest_inbox
           WHERE (id = $1 ${options.includeProcessed ? '' : 'AND processed_at IS NULL AND parked_at IS NULL'})
              OR id IN (SELECT id FROM ingest_inbox WHERE processed_at IS NULL AND parked_at IS NULL AND id <> $1
                        ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED)
           ORDER BY id
           FOR UPDATE SKIP LOCKED`,
    values: [id, options.alsoPending],
  });
  return result.rows;
}

/**
 * Locks up to `limit` of the oldest pending rows: a drain's batch. SKIP LOCKED, so parallel drains
 * take disjoint batches and a row another worker holds is that worker's. Parked rows are never taken.
 */
export async function lockPendingInboxRows(q: Queryable, limit: number): Promise<InboxRow[]> {
  const result = await q.query<InboxRow>({
    name: 'lock-pending-inbox-rows',
    text: `SELECT ${inboxColumns} FROM ingest_inbox
           WHERE processed_at IS NULL AND parked_at IS NULL
           ORDER BY id LIMIT $1
           FOR UPDATE SKIP LOCKED`,
    values: [limit],
  });
  return result.rows;
}

export interface InboxOutcome {
  samples: number;
  skipped: number;
  unmapped: number;
  error: string | null;
}

export async function markInboxProcessed(
  q: Queryable,
  outcomes: ReadonlyArray<InboxOutcome & { inboxId: number }>,
): Promise<void> {
  await q.query({
    name: 'mark-inbox-processed',
    text: `UPDATE ingest_inbox i SET processed_at = clock_timestamp(), parked_at = NULL, samples_count = o.samples,
             skipped_count = o.skipped, unmapped_count = o.unmapped, error = o.error
           FROM unnest($1::bigint[], $2::int[], $3::int[], $4::int[], $5::text[]) AS o(id, samples, skipped, unmapped, error)
           WHERE i.id = o.id`,
    values: [
      outcomes.map((o) => o.inboxId),
      outcomes.map((o) => o.samples),
      outcomes.map((o) => o.skipped),
      outcomes.map((o) => o.unmapped),
      outcomes.map((o) => o.error),
    ],
  });
}

/** Rows still owed processing and received before `before` (the recover sweep, `ingest.recover`, wakes their drains); parked rows wait for an operator. */
export async function listPendingInboxIds(q: Queryable, before: Date, limit: number): Promise<number[]> {
  const result = await q.query<{ id: number }>(
    `SELECT id FROM ingest_inbox WHERE processed_at IS NULL AND parked_at IS NULL AND received_at < $1 ORDER BY id LIMIT $2`,
    [before, limit],
  );
  return result.rows.map((r) => r.id);
}

/** Which inbox rows a replay takes: received since a time, of one provider or connection, parked only. */
export interface InboxFilter {
  since: Date | null;
  provider: string | null;
  connectionId: string | null;
  parkedOnly: boolean;
}

const filterWhere = `($1::timestamptz IS NULL OR received_at >= $1) AND ($2::text IS NULL OR provider = $2)
  AND ($3::uuid IS NULL OR connection_id = $3) AND (NOT $4::boolean OR parked_at IS NOT NULL)`;

function filterValues(filter: InboxFilter): unknown[] {
  return [filter.since, filter.provider, filter.connectionId, filter.parkedOnly];
}

/** Ids of the rows matching `filter` after `afterId`, in id order, for replay in pages. */
export async function listInboxIds(
  q: Queryable,
  filter: InboxFilter,
  afterId: number,
  limit: number,
): Promise<number[]> {
  const result = await q.query<{ id: number }>(
    `SELECT id FROM ingest_inbox WHERE ${filterWhere} AND id > $5 ORDER BY id LIMIT $6`,
    [...filterValues(filter), afterId, limit],
  );
  return result.rows.map((r) => r.id);
}

export async function countInbox(q: Queryable, filter: InboxFilter): Promise<number> {
  const result = await q.query<{ n: number }>(
    `SELECT count(*) AS n FROM ingest_inbox WHERE ${filterWhere}`,
    filterValues(filter),
  );
  return result.rows[0]!.n;
}

export interface ParkedRow {
  id: number;
  provider: string;
  connectionId: string;
  failedAttempts: number;
}

/**
 * Parks a row that failed on its own: no pick or sweep takes it again until a replay succeeds
 * (which clears parked_at). Each park counts one more failed attempt.
 */
export async function parkInboxRow(q: Queryable, id: number, error: string): Promise<ParkedRow | null> {
  const result = await q.query<ParkedRow>({
    name: 'park-inbox-row',
    text: `UPDATE ingest_inbox SET parked_at = clock_timestamp(), failed_attempts = failed_attempts + 1, error = $2
           WHERE id = $1
           RETURNING id, provider, connection_id AS "connectionId", failed_attempts AS "failedAttempts"`,
    values: [id, error],
  });
  return result.rows[0] ?? null;
}

export interface ParkedInboxRow {
  id: number;
  companyId: string;
  connectionId: string;
  provider: string;
  receivedAt: Date;
  parkedAt: Date;
  failedAttempts: number;
  error: string | null;
  payloadBytes: number;
}

export interface ParkedFilter {
  provider: string | null;
  connectionId: string | null;
  companyId: string | null;
}

const parkedFrom = `ingest_inbox i JOIN provider_connections c ON c.id = i.connection_id
  WHERE i.parked_at IS NOT NULL AND ($1::text IS NULL OR i.provider = $1)
    AND ($2::uuid IS NULL OR i.connection_id = $2) AND ($3::uuid IS NULL OR c.company_id = $3)`;

/** Parked rows for the operator, oldest first. */
export async function listParkedInboxRows(
  q: Queryable,
  filter: ParkedFilter,
  page: { limit: number; offset: number },
): Promise<ParkedInboxRow[]> {
  const result = await q.query<ParkedInboxRow>(
    `SELECT i.id, c.company_id AS "companyId", i.connection_id AS "connectionId", i.provider,
            i.received_at AS "receivedAt", i.parked_at AS "parkedAt", i.failed_attempts AS "failedAttempts", i.error,
            octet_length(i.payload) AS "payloadBytes"
     FROM ${parkedFrom}
     ORDER BY i.id LIMIT $4 OFFSET $5`,
    [filter.provider, filter.connectionId, filter.companyId, page.limit, page.offset],
  );
  return result.rows;
}

export async function countParkedInboxRows(q: Queryable, filter: ParkedFilter): Promise<number> {
  const result = await q.query<{ n: number }>(`SELECT count(*) AS n FROM ${parkedFrom}`, [
    filter.provider,
    filter.connectionId,
    filter.companyId,
  ]);
  return result.rows[0]!.n;
}

export interface InboxRowDetail {
  id: number;
  companyId: string;
  connectionId: string;
  provider: string;
  contentType: string | null;
  receivedAt: Date;
  processedAt: Date | null;
  parkedAt: Date | null;
  failedAttempts: number;
  error: string | null;
  samplesCount: number | null;
  skippedCount: number | null;
  unmappedCount: number | null;
  payloadBytes: number;
  payloadPreview: string;
}

/** One row for the operator: its state and the start of its payload (`previewChars` characters). */
export async function findInboxRow(q: Queryable, id: number, previewChars: number): Promise<InboxRowDetail | null> {
  const result = await q.query<InboxRowDetail>(
    `SELECT i.id, c.company_id AS "companyId", i.connection_id AS "connectionId", i.provider,
            i.content_type AS "contentType", i.received_at AS "receivedAt", i.processed_at AS "processedAt",
            i.parked_at AS "parkedAt", i.failed_attempts AS "failedAttempts", i.error, i.samples_count AS "samplesCount",
            i.skipped_count AS "skippedCount", i.unmapped_count AS "unmappedCount",
            octet_length(i.payload) AS "payloadBytes", left(i.payload, $2) AS "payloadPreview"
     FROM ingest_inbox i JOIN provider_connections c ON c.id = i.connection_id
     WHERE i.id = $1`,
    [id, previewChars],
  );
  return result.rows[0] ?? null;
}

/**
 * Deletes up to `limit` processed inbox rows received before `before` (INBOX_RETENTION_DAYS);
 * rows still owed processing or parked are never deleted. Answers how many went.
 */
export async function deleteProcessedInboxRows(q: Queryable, before: Date, limit: number): Promise<number> {
  const result = await q.query<{ n: number }>({
    name: 'delete-processed-inbox-rows',
    text: `WITH gone AS (
             DELETE FROM ingest_inbox WHERE id IN (
               SELECT id FROM ingest_inbox
               WHERE received_at < $1 AND processed_at IS NOT NULL AND parked_at IS NULL
               LIMIT $2 FOR UPDATE SKIP LOCKED
             ) RETURNING 1
           )
           SELECT count(*)::int AS n FROM gone`,
    values: [before, limit],
  });
  return result.rows[0]!.n;
}
