import pg from 'pg';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
/** A pool or a client inside a transaction: statements accept either. */
export type Queryable = pg.Pool | pg.PoolClient;

// Dates stay Date objects; int8 counts (COUNT(*)) come back as JS numbers, always far below 2^53 here.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

/** Bounds that keep a stuck query or transaction from holding connections (src/config.ts gives each one's meaning). */
export type PoolTimeouts = Pick<
  Config,
  'databaseConnectTimeoutMs' | 'databaseStatementTimeoutMs' | 'databaseIdleInTransactionTimeoutMs'
>;

/**
 * Without `timeouts` (migrations, the CLI) statements may run as long as they need. `readTimeoutMs`
 * bounds every query on the client's side too, so a host that stopped answering (not a slow
 * statement) fails in time: the replica checks use it (src/db/read-routing.ts).
 */
export function createPool(
  databaseUrl: string,
  max: number,
  log: Logger,
  timeouts?: PoolTimeouts,
  readTimeoutMs?: number,
): Pool {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max,
    idleTimeoutMillis: 30_000,
    ...(readTimeoutMs ? { query_timeout: readTimeoutMs } : {}),
    ...(timeouts
      ? {
          connectionTimeoutMillis: timeouts.databaseConnectTimeoutMs,
          statement_timeout: timeouts.databaseStatementTimeoutMs,
          idle_in_transaction_session_timeout: timeouts.databaseIdleInTransactionTimeoutMs,
        }
      : {}),
  });
  // An idle client that loses its server emits here; without a listener the process would crash.
  pool.on('error', (err) => log.warn({ err }, 'idle postgres client failed'));
  return pool;
}

const poolTimeoutMessages = new Set([
  'timeout exceeded when trying to connect',
  'Connection terminated due to connection timeout',
]);

/**
 * True when Postgres did not answer in time rather than refused the request: a statement cancelled
 * (57014: statement_timeout or an operator's pg_cancel_backend), a session ended for idling in a
 * transaction (25P03), or no pooled connection within the connect timeout. Worth a retry later.
 */
export function isDatabaseTimeout(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  return code === '57014' || code === '25P03' || poolTimeoutMessages.has(error.message);
}

/** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
export async function withTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  // Postgres may end the session while we hold it between statements (idle in transaction past its
  // timeout, a restart). The next statement then fails and the pool drops the client on release;
  // the 'error' event itself needs a listener, or it would crash the process.
  client.on('error', ignoreClientError);
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.removeListener('error', ignoreClientError);
    client.release();
  }
}

function ignoreClientError(): void {}

/**
 * The current transaction's commit returns without waiting for its WAL to reach disk. A crash of
 * Postgres may then lose the last few hundred milliseconds of such commits (up to three
 * `wal_writer_delay`s), never leave one half-written: only for writes whose loss is acceptable,
 * such as the request log's batches; never for a reading, an event or a delivery.
 */
export async function commitWithoutFlushWait(q: Queryable): Promise<void> {
  await q.query(`SET LOCAL synchronous_commit = off`);
}

/** A value for a jsonb parameter: SQL NULL for null/undefined (not the JSON literal `null`). */
export function jsonb(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}
