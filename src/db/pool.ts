import pg from 'pg';
import type { Logger } from '../log.js';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
/** A pool or a client inside a transaction: statements accept either. */
export type Queryable = pg.Pool | pg.PoolClient;

// Dates stay Date objects; int8 counts (COUNT(*)) come back as JS numbers, always far below 2^53 here.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export function createPool(databaseUrl: string, max: number, log: Logger): Pool {
  const pool = new pg.Pool({ connectionString: databaseUrl, max, idleTimeoutMillis: 30_000 });
  // An idle client that loses its server emits here; without a listener the process would crash.
  pool.on('error', (err) => log.warn({ err }, 'idle postgres client failed'));
  return pool;
}

/** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
export async function withTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/** A value for a jsonb parameter: SQL NULL for null/undefined (not the JSON literal `null`). */
export function jsonb(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}
