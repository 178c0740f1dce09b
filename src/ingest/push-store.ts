/**
 * Stores a verified push in the inbox. With a replay key, at most once per replay window: the
 * inbox row and the key's receipt are written by one statement, so a key is never remembered
 * without its row (a failed store leaves the provider's retry free to store it).
 */
import { createHash } from 'node:crypto';
import { replayWindowMs } from '../../providers/push.js';
import { insertInboxRow, type NewInboxRow } from '../db/inbox.js';
import type { Pool } from '../db/pool.js';
import { findPushReceipt, insertInboxRowOnce } from '../db/push-receipts.js';

export interface StoredPush {
  id: number;
  receivedAt: Date;
  /** True when the key was stored before within the window: `id` is that earlier row, nothing new was written. */
  duplicate: boolean;
}

export async function storePush(pool: Pool, row: NewInboxRow, replayKey: string | null): Promise<StoredPush> {
  if (replayKey === null) return { ...(await insertInboxRow(pool, row)), duplicate: false };
  const keyDigest = createHash('sha256').update(replayKey, 'utf8').digest();
  const stored = await insertInboxRowOnce(pool, row, keyDigest, replayWindowMs / 1000);
  if (stored) return stored;
  // The earlier push committed while this one waited on its key: a duplicate of a row this
  // statement could not see. (Gone again only if it just left the window: then store anew.)
  const earlier = await findPushReceipt(pool, row.connectionId, keyDigest);
  return earlier
    ? { id: earlier.inboxId, receivedAt: earlier.receivedAt, duplicate: true }
    : storePush(pool, row, replayKey);
}
