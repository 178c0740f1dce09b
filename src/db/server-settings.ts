/** What the product needs of the Postgres server's own settings, read at start-up. */
import type { Queryable } from './pool.js';

/**
 * Whether autovacuum is on. Ingest rewrites a vehicle's row in nearly every batch and most of those
 * updates add index entries, so without vacuum `vehicles` bloats as fast as the fleet reports and
 * every read and write of it slows (docs/operations.md "Postgres").
 */
export async function autovacuumOn(q: Queryable): Promise<boolean> {
  const result = await q.query<{ autovacuum: string }>('SHOW autovacuum');
  return result.rows[0]?.autovacuum === 'on';
}
