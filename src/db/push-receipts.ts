/** Receipts of stored pushes, for replay protection (migrations/0009_push_receipts.sql). */
import type { NewInboxRow } from './inbox.js';
import type { Queryable } from './pool.js';

export interface StoredOnce {
  id: number;
  receivedAt: Date;
  duplicate: boolean;
}

/**
 * Stores a push in the inbox unless a push with the same replay key was stored after
 * `windowSeconds` ago, in one statement (so atomically, in one round trip): the key's receipt is
 * claimed first, and only a claim inserts the inbox row, under the id the receipt names. Receipts
 * of the connection older than the window go in the same statement, so the table holds about one
 * window of pushes. A concurrent push with the same key waits on the key's row and then loses the
 * claim. Returns the earlier row for a duplicate, or null when the earlier row committed during
 * this statement (then it is not in this statement's snapshot: `findPushReceipt` finds it).
 */
export async function insertInboxRowOnce(
  q: Queryable,
  row: NewInboxRow,
  keyDigest: Buffer,
  windowSeconds: number,
): Promise<StoredOnce | null> {
  const result = await q.query<StoredOnce>({
    name: 'insert-inbox-row-once',
    text: `WITH expired AS (
             DELETE FROM ingest_push_receipts
             WHERE connection_id = $1 AND key_digest <> $7 AND received_at < now() - make_interval(secs => $8)
           ), claim AS (
             INSERT INTO ingest_push_receipts (connection_id, key_digest, received_at, inbox_id)
             VALUES ($1, $7, now(), nextval(pg_get_serial_sequence('ingest_inbox', 'id')))
             ON CONFLICT (connection_id, key_digest) DO UPDATE
               SET received_at = EXCLUDED.received_at, inbox_id = EXCLUDED.inbox_id
               WHERE ingest_push_receipts.received_at < now() - make_interval(secs => $8)
             RETURNING inbox_id
           ), stored AS (
             INSERT INTO ingest_inbox (id, connection_id, provider, content_type, payload, cascade, refresh_id)
             OVERRIDING SYSTEM VALUE
             SELECT inbox_id, $1, $2, $3, $4, $5, $6 FROM claim
             RETURNING id, received_at
           )
           SELECT id, received_at AS "receivedAt", false AS duplicate FROM stored
           UNION ALL
           SELECT inbox_id, received_at, true FROM ingest_push_receipts
           WHERE connection_id = $1 AND key_digest = $7 AND NOT EXISTS (SELECT 1 FROM claim)`,
    values: [
      row.connectionId,
      row.provider,
      row.contentType,
      row.payload,
      row.cascade,
      row.refreshId,
      keyDigest,
      windowSeconds,
    ],
  });
  return result.rows[0] ?? null;
}

/** The receipt of an earlier push with this key. */
export async function findPushReceipt(
  q: Queryable,
  connectionId: string,
  keyDigest: Buffer,
): Promise<{ inboxId: number; receivedAt: Date } | null> {
  const result = await q.query<{ inboxId: number; receivedAt: Date }>({
    name: 'find-push-receipt',
    text: `SELECT inbox_id AS "inboxId", received_at AS "receivedAt" FROM ingest_push_receipts
           WHERE connection_id = $1 AND key_digest = $2`,
    values: [connectionId, keyDigest],
  });
  return result.rows[0] ?? null;
}
