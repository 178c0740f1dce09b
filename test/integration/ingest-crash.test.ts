/**
 * Reliability of ingestion across process death and Redis loss, with real worker processes
 * (`node dist/server/main.js worker ingest`, built by `npm test` before vitest runs).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createConnection, drainInbox, genericBatch, pushGeneric, readingCount } from '../helpers/ingest.js';
import { ProcessGroup, serviceEnv, type ServiceProcess } from '../helpers/processes.js';

let t: TestApp;
let acme: { id: string; key: string };
let connection: { id: string; secret: string };
const processes = new ProcessGroup();

function startWorkerProcess(): Promise<ServiceProcess> {
  return processes.start(['worker', 'ingest'], serviceEnv(t));
}

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.createCompany();
  const created = await createConnection(t, acme.id, 'generic');
  connection = { id: created.id, secret: created.generated_secret! };
});
afterAll(async () => {
  await processes.killAll();
  await t.close();
});

describe('a worker killed in the middle of a batch', () => {
  it('loses nothing and duplicates nothing: another worker redoes the batch', async () => {
    const truck = await t.createVehicle(acme.id, {
      provider_connection_id: connection.id,
      provider_vehicle_id: 'crash-1',
    });
    // Hold the vehicle row so the worker stops after inserting the readings, inside its transaction.
    const blocker = await t.pool.connect();
    await blocker.query('BEGIN');
    await blocker.query('SELECT 1 FROM vehicles WHERE id = $1 FOR UPDATE', [truck.id]);

    const first = await startWorkerProcess();
    const pushed = await pushGeneric(
      t,
      'generic',
      connection.id,
      connection.secret,
      genericBatch('crash-1', 500, Date.parse('2026-11-21T00:00:00Z')),
    );
    expect(pushed.statusCode).toBe(202);
    // The worker has inserted the readings and now waits on the vehicle row (the lock it takes
    // before the latest state), inside its open transaction.
    await expect
      .poll(
        async () => {
          const { rows } = await t.pool.query(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%FROM vehicles%FOR NO KEY UPDATE%'`,
          );
          return rows[0].n;
        },
        { timeout: 20_000, interval: 100 },
      )
      .toBe(1);

    await first.kill();
    await blocker.query('COMMIT');
    blocker.release();
    // The dead worker's transaction never committed.
    await expect.poll(async () => readingCount(t, truck.id), { timeout: 5000 }).toBe(0);

    await startWorkerProcess();
    await drainInbox(t, 60_000);
    expect(await readingCount(t, truck.id)).toBe(1000);
    const { rows } = await t.pool.query(
      `SELECT samples_count, processed_at IS NOT NULL AS done FROM ingest_inbox WHERE id = $1`,
      [pushed.json().data.inbox_id],
    );
    expect(rows[0]).toEqual({ samples_count: 1000, done: true });
    const vehicle = (await t.api('GET', `/vehicles/${truck.id}`, acme.key)).json().data;
    expect(vehicle.signals.observed_at.speed_kph).toBe('2026-11-21T00:08:19.000Z');
  }, 120_000);
});

describe('Redis losing the queue', () => {
  it('rows left unprocessed in the inbox are re-enqueued when workers start', async () => {
    await processes.killAll();
    const truck = await t.createVehicle(acme.id, {
      provider_connection_id: connection.id,
      provider_vehicle_id: 'lost-1',
    });
    const pushed = await pushGeneric(
      t,
      'generic',
      connection.id,
      connection.secret,
      genericBatch('lost-1', 20, Date.parse('2026-11-21T06:00:00Z')),
    );
    expect(pushed.statusCode).toBe(202);
    // Redis loses everything it held for the ingest queue; the row predates the restart.
    await t.queues.queue('ingest').obliterate({ force: true });
    await t.pool.query(`UPDATE ingest_inbox SET received_at = now() - interval '5 minutes' WHERE id = $1`, [
      pushed.json().data.inbox_id,
    ]);

    await t.startWorkers(['ingest']);
    await drainInbox(t, 20_000);
    expect(await readingCount(t, truck.id)).toBe(40);
  }, 60_000);
});
