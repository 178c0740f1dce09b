import type { Pool, PoolClient } from './pool.js';

/**
 * Serializes transactions that work on one company's `resource` (count, then insert) until the
 * transaction ends. Different keys may share a hash; they then merely wait for each other.
 */
export async function lockCompanyResource(tx: PoolClient, companyId: string, resource: string): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`${resource}:${companyId}`]);
}

/**
 * Runs `work` while holding a session-level advisory lock on `resource`, on a pooled connection of
 * its own (no transaction stays open meanwhile), released when `work` settles; Postgres frees it by
 * itself when the session ends, so a process that dies holds nothing. Answers null, without
 * running `work`, when another session holds the lock.
 */
export async function whileHoldingLock<T>(pool: Pool, resource: string, work: () => Promise<T>): Promise<T | null> {
  const client = await pool.connect();
  // The session may end while held (a restart); the 'error' event needs a listener, or it would crash the process.
  client.on('error', ignoreClientError);
  let broken: Error | undefined;
  try {
    const { rows } = await client.query<{ locked: boolean }>(
      'SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS locked',
      [resource],
    );
    if (!rows[0]!.locked) return null;
    try {
      return await work();
    } finally {
      await client.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [resource]).catch((error: Error) => {
        // Dropping the connection ends the session, which frees the lock all the same.
        broken = error;
      });
    }
  } finally {
    client.removeListener('error', ignoreClientError);
    client.release(broken);
  }
}

function ignoreClientError(): void {}
