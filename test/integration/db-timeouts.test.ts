/**
 * Postgres pool timeouts (DATABASE_*_TIMEOUT_MS): a stuck query or a full pool answers a clean
 * 503 envelope instead of holding the request, and the pool serves again once the cause is gone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/db/pool.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let acme: { id: string; key: string };

beforeAll(async () => {
  t = await createTestApp({
    DATABASE_STATEMENT_TIMEOUT_MS: '300',
    DATABASE_CONNECT_TIMEOUT_MS: '300',
    DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: '1500',
  });
  acme = await t.createCompany();
  await t.createVehicle(acme.id);
});
afterAll(async () => {
  await t.close();
});

function expectUnavailable(response: { statusCode: number; body: string; json(): any }) {
  expect(response.statusCode).toBe(503);
  expect(response.json()).toEqual({
    success: false,
    error: { code: 'SERVICE_UNAVAILABLE', message: 'the database did not answer in time; retry later', details: null },
    meta: expect.any(Object),
  });
  expect(response.body).not.toMatch(/statement|cancel|timeout exceeded|pg|stack/i);
}

describe('Postgres timeouts', () => {
  it('a query past the statement timeout answers 503; the same request succeeds once the lock is gone', async () => {
    // Another session holds the table, so the list query waits past the statement timeout.
    const holder = await t.pool.connect();
    holder.on('error', () => {});
    await holder.query('BEGIN');
    await holder.query('LOCK TABLE vehicles IN ACCESS EXCLUSIVE MODE');
    try {
      expectUnavailable(await t.api('GET', '/vehicles', acme.key));
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
    const after = await t.api('GET', '/vehicles', acme.key);
    expect(after.statusCode).toBe(200);
    expect(after.json().data).toHaveLength(1);
  });

  it('no free pooled connection within the connect timeout answers 503; the pool recovers', async () => {
    const held = await Promise.all(Array.from({ length: 5 }, () => t.pool.connect()));
    try {
      expectUnavailable(await t.api('GET', '/vehicles', acme.key));
    } finally {
      for (const client of held) client.release();
    }
    expect((await t.api('GET', '/vehicles', acme.key)).statusCode).toBe(200);
  });

  it('a transaction left idle past the timeout is ended by Postgres, its locks freed, and the process survives', async () => {
    let stuckPid = 0;
    let resume = () => {};
    const stuck = withTransaction(t.pool, async (tx) => {
      stuckPid = (await tx.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
      await tx.query('SELECT id FROM vehicles FOR UPDATE');
      // Holds the lock while waiting on something else, until Postgres has ended the session.
      await new Promise<void>((resolve) => (resume = resolve));
      await tx.query('SELECT 1');
    });
    const outcome = stuck.then(
      () => 'committed',
      (error: Error) => error.message,
    );
    // Idle in transaction with the row locked, then gone once the timeout (1.5 s) has passed.
    const session = async () =>
      (
        await t.pool.query(
          `SELECT a.state, EXISTS (SELECT 1 FROM pg_locks l WHERE l.pid = a.pid AND l.relation = 'vehicles'::regclass) AS locks
           FROM pg_stat_activity a WHERE a.pid = $1`,
          [stuckPid],
        )
      ).rows[0] ?? null;
    await expect.poll(session, { timeout: 5000, interval: 20 }).toEqual({ state: 'idle in transaction', locks: true });
    await expect.poll(session, { timeout: 5000, interval: 50 }).toBeNull();
    // Postgres ended the idle session: the row lock is free while the transaction still waits.
    const { rows } = await t.pool.query('SELECT id FROM vehicles FOR UPDATE NOWAIT');
    expect(rows).toHaveLength(1);
    resume();
    expect(await outcome).not.toBe('committed');
    expect((await t.api('GET', '/vehicles', acme.key)).statusCode).toBe(200);
  });
});
