/**
 * Statements of the idempotency store of the paid calls (migration 0016, docs/api.md
 * "Idempotency-Key"). A key is claimed before the work runs and completed with the answer in the
 * transaction that bills it; a failed request releases its claim so a retry runs again.
 */
import type { Queryable } from './pool.js';

export interface IdempotencyScope {
  companyId: string;
  endpoint: string;
  key: string;
}

export interface StoredAnswer {
  statusCode: number;
  contentType: string;
  body: Buffer;
}

export type ExistingKey =
  { state: 'completed'; requestHash: string; answer: StoredAnswer } | { state: 'in_progress'; requestHash: string };

/**
 * Claims the key for a request made at `now`. An expired row, or a claim older than
 * `staleClaimSeconds` that never completed (its process died), is taken over. Returns the claim
 * time (the token completion and release check), or null when someone else holds the key.
 */
export async function claimIdempotencyKey(
  q: Queryable,
  scope: IdempotencyScope,
  requestHash: string,
  now: Date,
  keepSeconds: number,
  staleClaimSeconds: number,
): Promise<Date | null> {
  const result = await q.query<{ claimedAt: Date }>({
    name: 'claim-idempotency-key',
    text: `INSERT INTO idempotency_keys (company_id, endpoint, key, request_hash, claimed_at, expires_at)
           VALUES ($1, $2, $3, $4, $5::timestamptz, $5::timestamptz + make_interval(secs => $6::float8))
           ON CONFLICT (company_id, endpoint, key) DO UPDATE
             SET request_hash = EXCLUDED.request_hash, claimed_at = EXCLUDED.claimed_at, completed_at = NULL,
                 status_code = NULL, content_type = NULL, body = NULL, expires_at = EXCLUDED.expires_at
             WHERE idempotency_keys.expires_at <= EXCLUDED.claimed_at
                OR (idempotency_keys.completed_at IS NULL
                    AND idempotency_keys.claimed_at <= EXCLUDED.claimed_at - make_interval(secs => $7::float8))
           RETURNING claimed_at AS "claimedAt"`,
    values: [scope.companyId, scope.endpoint, scope.key, requestHash, now, keepSeconds, staleClaimSeconds],
  });
  return result.rows[0]?.claimedAt ?? null;
}

/** The key's row as it stands (null when its claim was just released). */
export async function findIdempotencyKey(q: Queryable, scope: IdempotencyScope): Promise<ExistingKey | null> {
  const result = await q.query<{
    requestHash: string;
    completedAt: Date | null;
    statusCode: number | null;
    contentType: string | null;
    body: Buffer | null;
  }>({
    name: 'find-idempotency-key',
    text: `SELECT request_hash AS "requestHash", completed_at AS "completedAt", status_code AS "statusCode",
                  content_type AS "contentType", body
           FROM idempotency_keys WHERE company_id = $1 AND endpoint = $2 AND key = $3`,
    values: [scope.companyId, scope.endpoint, scope.key],
  });
  const row = result.rows[0];
  if (!row) return null;
  if (row.completedAt === null) return { state: 'in_progress', requestHash: row.requestHash };
  return {
    state: 'completed',
    requestHash: row.requestHash,
    answer: { statusCode: row.statusCode!, contentType: row.contentType!, body: row.body! },
  };
}

/** Stores the answer; false when the claim made at `claimedAt` is no longer this request's. */
export async function completeIdempotencyKey(
  q: Queryable,
  scope: IdempotencyScope,
  claimedAt: Date,
  answer: StoredAnswer,
  now: Date,
): Promise<boolean> {
  const result = await q.query({
    name: 'complete-idempotency-key',
    text: `UPDATE idempotency_keys SET completed_at = $5, status_code = $6, content_type = $7, body = $8
           WHERE company_id = $1 AND endpoint = $2 AND key = $3 AND claimed_at = $4 AND completed_at IS NULL`,
    values: [
      scope.companyId,
      scope.endpoint,
      scope.key,
      claimedAt,
      now,
      answer.statusCode,
      answer.contentType,
      answer.body,
    ],
  });
  return result.rowCount === 1;
}

/** Gives the key back after a failed request, so its retry runs again. */
export async function releaseIdempotencyKey(q: Queryable, scope: IdempotencyScope, claimedAt: Date): Promise<void> {
  await q.query(
    `DELETE FROM idempotency_keys
     WHERE company_id = $1 AND endpoint = $2 AND key = $3 AND claimed_at = $4 AND completed_at IS NULL`,
    [scope.companyId, scope.endpoint, scope.key, claimedAt],
  );
}

/** Drops keys past their 24 hours (the maintenance queue, hourly); returns how many. */
export async function deleteExpiredIdempotencyKeys(q: Queryable, now: Date): Promise<number> {
  const result = await q.query(`DELETE FROM idempotency_keys WHERE expires_at <= $1`, [now]);
  return result.rowCount ?? 0;
}
