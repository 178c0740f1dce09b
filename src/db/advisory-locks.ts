import type { PoolClient } from './pool.js';

/**
 * Serializes transactions that work on one company's `resource` (count, then insert) until the
 * transaction ends. Different keys may share a hash; they then merely wait for each other.
 */
export async function lockCompanyResource(tx: PoolClient, companyId: string, resource: string): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`${resource}:${companyId}`]);
}
