/**
 * Metering of the paid calls (docs/pricing.md): each successful report or
 * verification is billed once, in the transaction that stores its answer under the caller's
 * Idempotency-Key; failed, refused and rate-limited calls never reach it.
 *
 * With a key, a request first claims (company, endpoint, key):
 * - a completed claim for the same request is replayed (same status, type and bytes, not billed);
 * - the same key with a different request is refused (422 IDEMPOTENCY_KEY_REUSED);
 * - a claim still running answers 409 IDEMPOTENCY_KEY_IN_USE with Retry-After (the caller
 *   retries and gets the replay), rather than holding a connection open on a lock;
 * - a claim that never completed within `staleClaimSeconds` (its process died) is taken over.
 */
import { createHash } from 'node:crypto';
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  findIdempotencyKey,
  releaseIdempotencyKey,
  type IdempotencyScope,
  type StoredAnswer,
} from '../db/idempotency.js';
import { withTransaction, type Pool } from '../db/pool.js';
import { insertUsage, type MeteredProduct, type UsageEntry } from '../db/usage.js';
import { AppError } from '../errors.js';
import { monthFirstDay, monthOf } from './months.js';
import { unitPriceMicros } from './pricing.js';

/** How long a key's answer is kept (docs/pricing.md: 24 hours). */
export const idempotencyKeepSeconds = 24 * 60 * 60;
/** Longer than any report takes to build; a claim this old without an answer is abandoned. */
export const staleClaimSeconds = 120;

export type Claim = { kind: 'claimed'; claimedAt: Date } | { kind: 'replay'; answer: StoredAnswer };

/** SHA-256 of what decides the answer, so a reused key with another request is recognised. */
export function requestHash(fingerprint: unknown): string {
  return createHash('sha256').update(JSON.stringify(fingerprint)).digest('hex');
}

export async function claimPaidRequest(pool: Pool, scope: IdempotencyScope, hash: string, now: Date): Promise<Claim> {
  // Two rounds: a claim released between our insert and our read leaves nothing to read.
  for (let round = 0; round < 2; round++) {
    const claimedAt = await claimIdempotencyKey(pool, scope, hash, now, idempotencyKeepSeconds, staleClaimSeconds);
    if (claimedAt) return { kind: 'claimed', claimedAt };
    const existing = await findIdempotencyKey(pool, scope);
    if (!existing) continue;
    if (existing.requestHash !== hash) throw new AppError('IDEMPOTENCY_KEY_REUSED');
    if (existing.state === 'completed') return { kind: 'replay', answer: existing.answer };
    break;
  }
  throw new AppError('IDEMPOTENCY_KEY_IN_USE', undefined, null, 1);
}

export async function releasePaidRequest(pool: Pool, scope: IdempotencyScope, claimedAt: Date): Promise<void> {
  await releaseIdempotencyKey(pool, scope, claimedAt);
}

export interface BilledRequest {
  companyId: string;
  product: MeteredProduct;
  tier: string;
  requestId: string;
  now: Date;
  /** The claim to complete with the answer, when the request came with a key. */
  idempotency: { scope: IdempotencyScope; claimedAt: Date; answer: StoredAnswer } | null;
}

export function usageEntry(b: BilledRequest): UsageEntry {
  return {
    companyId: b.companyId,
    product: b.product,
    tier: b.tier,
    unitPriceMicros: unitPriceMicros(b.product, b.tier),
    requestKey: b.requestId,
    idempotencyKey: b.idempotency?.scope.key ?? null,
    month: monthFirstDay(monthOf(b.now)),
    billedAt: b.now,
  };
}

/**
 * Bills the request and stores its answer in one transaction. False when the claim was taken
 * over meanwhile (this request outlived `staleClaimSeconds`): the request that holds the key now
 * bills its own answer, so this one is not billed.
 */
export async function billPaidRequest(pool: Pool, b: BilledRequest): Promise<boolean> {
  const entry = usageEntry(b);
  const idempotency = b.idempotency;
  if (!idempotency) {
    await insertUsage(pool, entry);
    return true;
  }
  return withTransaction(pool, async (tx) => {
    const completed = await completeIdempotencyKey(
      tx,
      idempotency.scope,
      idempotency.claimedAt,
      idempotency.answer,
      b.now,
    );
    if (completed) await insertUsage(tx, entry);
    return completed;
  });
}
