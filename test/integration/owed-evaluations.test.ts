/**
 * The health evaluations an ingest batch owes (src/ingest/owed-evaluations.ts): recorded in the
 * batch's transaction, deleted once the job enqueued them, and otherwise enqueued by the relay;
 * relays in parallel take disjoint records. Real Postgres and Redis; the crash between commit and
 * enqueue is the batch committed by `ingestInboxBatch` with no job around it to enqueue.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { adapters } from '../../providers/index.js';
import { insertInboxRow } from '../../src/db/inbox.js';
import { lockOwedEvaluations } from '../../src/db/owed-evaluations.js';
import { withTransaction } from '../../src/db/pool.js';
import { runIngestBatch } from '../../src/ingest/ingest-job.js';
import { ingestInboxBatch } from '../../src/ingest/isolation.js';
import { mergeOwedEvaluations, relayOwedEvaluations } from '../../src/ingest/owed-evaluations.js';
import { createLogger } from '../../src/log.js';
import { createMetrics } from '../../src/metrics.js';
import { createRedis } from '../../src/queue/connection.js';
import { Queues } from '../../src/queue/queues.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createConnection } from '../helpers/ingest.js';

let t: TestApp;
let connection: { id: string; secret: string };
const vehicles: Record<string, string> = {};

beforeAll(async () => {
  t = await createTestApp();
  const acme = await t.createCompany();
  const created = await createConnection(t, acme.id, 'generic');
  connection = { id: created.id, secret: created.generated_secret! };
  for (const name of ['owed-1', 'owed-2', 'owed-3']) {
    vehicles[name] = (
      await t.createVehicle(acme.id, { provider_connection_id: connection.id, provider_vehicle_id: name })
    ).id;
  }
});
afterAll(async () => {
  await t?.close();
});
beforeEach(async () => {
  await t.pool.query('DELETE FROM health_evaluations_owed');
  await t.queues.queue('health').obliterate({ force: true });
});

let clockMs = Date.parse('2026-11-21T00:00:00Z');

/** A pending inbox row with one reading for each named vehicle, a second later each time. */
async function storeRow(names: string[], cascade: boolean): Promise<number> {
  clockMs += 1000;
  const readings = names.map((vehicle) => ({
    vehicle,
    ts: new Date(clockMs).toISOString(),
    signals: { odometer_km: clockMs / 1e9 },
  }));
  const row = await insertInboxRow(t.pool, {
    connectionId: connection.id,
    provider: 'generic',
    contentType: 'application/json',
    payload: JSON.stringify({ readings }),
    cascade,
    refreshId: null,
  });
  return row.id;
}

async function owedRows() {
  const { rows } = await t.pool.query(
    `SELECT cascade_vehicle_ids AS "cascade", no_cascade_vehicle_ids AS "noCascade" FROM health_evaluations_owed ORDER BY id`,
  );
  return rows.map((r) => ({ cascade: [...r.cascade].sort(), noCascade: [...r.noCascade].sort() }));
}

/** The queued health.evaluate jobs as "vehicle name/c|n". */
async function queuedEvaluations(): Promise<string[]> {
  const names = Object.fromEntries(Object.entries(vehicles).map(([name, id]) => [id, name]));
  const jobs = await t.queues.queue('health').getJobs(['waiting', 'delayed', 'prioritized']);
  return jobs
    .filter((job) => job.name === 'health.evaluate')
    .map((job) => `${names[job.data.vehicleId]}/${job.data.cascade ? 'c' : 'n'}`)
    .sort();
}

const sorted = (ids: string[]) => [...ids].sort();

describe('evaluations owed by an ingest batch', () => {
  it('are recorded in the batch transaction, one record with each vehicle under its cascade flag', async () => {
    await storeRow(['owed-1', 'owed-2'], true);
    await storeRow(['owed-2', 'owed-3'], false);
    // Committed, and nothing enqueued: the process died right after the commit.
    const outcome = await ingestInboxBatch(t.pool, adapters);
    expect(outcome.rows).toHaveLength(2);
    expect(outcome.owedIds).toHaveLength(1);
    // owed-2 came with cascade in one row and without in the other: owed once, with cascade.
    expect(await owedRows()).toEqual([
      { cascade: sorted([vehicles['owed-1']!, vehicles['owed-2']!]), noCascade: [vehicles['owed-3']] },
    ]);
    expect(await queuedEvaluations()).toEqual([]);
  });

  it('are enqueued by the job right after the commit, and then no longer owed', async () => {
    await storeRow(['owed-1', 'owed-3'], true);
    const result = await runIngestBatch(
      { pool: t.pool, queues: t.queues, log: createLogger('silent'), metrics: createMetrics('test') },
      adapters,
    );
    expect(result).toMatchObject({ rows: 1, vehicles: 2 });
    expect(await queuedEvaluations()).toEqual(['owed-1/c', 'owed-3/c']);
    expect(await owedRows()).toEqual([]);
  });

  it('stay owed when Redis is away at the enqueue, and the relay enqueues them', async () => {
    // Queues whose Redis connection was lost after it had been working.
    const lost = createRedis(t.config, 'producer', createLogger('silent'));
    const lostQueues = new Queues(lost, t.config.redisPrefix);
    try {
      await lostQueues.queue('health').getJobCounts();
      lost.disconnect();
      await storeRow(['owed-2'], false);
      await runIngestBatch(
        { pool: t.pool, queues: lostQueues, log: createLogger('silent'), metrics: createMetrics('test') },
        adapters,
      );
      expect(await owedRows()).toEqual([{ cascade: [], noCascade: [vehicles['owed-2']] }]);

      // A relay with Redis away enqueues nothing and deletes nothing.
      await expect(relayOwedEvaluations({ pool: t.pool, queues: lostQueues }, 0)).rejects.toThrow();
      expect(await owedRows()).toHaveLength(1);
    } finally {
      await lostQueues.close().catch(() => {});
    }

    expect(await relayOwedEvaluations({ pool: t.pool, queues: t.queues }, 0)).toEqual({
      records: 1,
      evaluations: 1,
    });
    expect(await queuedEvaluations()).toEqual(['owed-2/n']);
    expect(await owedRows()).toEqual([]);
  });

  it("are left to their own enqueue while younger than the relay interval, on the database's clock", async () => {
    await storeRow(['owed-1'], true);
    await ingestInboxBatch(t.pool, adapters);
    const relay = () => relayOwedEvaluations({ pool: t.pool, queues: t.queues }, 5000);
    expect(await relay()).toEqual({ records: 0, evaluations: 0 });
    expect(await owedRows()).toHaveLength(1);
    // Owed 4 s ago by the database's clock: still young.
    await t.pool.query(`UPDATE health_evaluations_owed SET owed_at = clock_timestamp() - interval '4 seconds'`);
    expect(await relay()).toEqual({ records: 0, evaluations: 0 });
    // 6 s ago: the relay takes it.
    await t.pool.query(`UPDATE health_evaluations_owed SET owed_at = clock_timestamp() - interval '6 seconds'`);
    expect(await relay()).toEqual({ records: 1, evaluations: 1 });
    expect(await queuedEvaluations()).toEqual(['owed-1/c']);
  });

  it('are relayed once by relays in parallel: a record another relay holds is skipped', async () => {
    await storeRow(['owed-1'], true);
    await ingestInboxBatch(t.pool, adapters);
    await storeRow(['owed-2'], false);
    await ingestInboxBatch(t.pool, adapters);
    await storeRow(['owed-3'], true);
    await ingestInboxBatch(t.pool, adapters);

    // Another relay holds the oldest record (it is between its lock and its commit).
    const held = await t.pool.connect();
    try {
      await held.query('BEGIN');
      const holding = await lockOwedEvaluations(held, 0, 1);
      expect(holding).toHaveLength(1);
      const relays = await Promise.all([
        relayOwedEvaluations({ pool: t.pool, queues: t.queues }, 0),
        relayOwedEvaluations({ pool: t.pool, queues: t.queues }, 0),
      ]);
      expect(relays.reduce((sum, r) => sum + r.records, 0)).toBe(2);
      expect(await queuedEvaluations()).toEqual(['owed-2/n', 'owed-3/c']);
      await held.query('ROLLBACK');
    } finally {
      held.release();
    }
    // Its holder died before committing: the record is relayed by the next pass.
    expect(await relayOwedEvaluations({ pool: t.pool, queues: t.queues }, 0)).toEqual({
      records: 1,
      evaluations: 1,
    });
    expect(await queuedEvaluations()).toEqual(['owed-1/c', 'owed-2/n', 'owed-3/c']);
    expect(await owedRows()).toEqual([]);
  });

  it('merge as one batch would: one evaluation per vehicle, with cascade when any record had it', () => {
    expect(
      mergeOwedEvaluations([
        { cascadeVehicleIds: ['a'], noCascadeVehicleIds: ['b', 'c'] },
        { cascadeVehicleIds: ['b'], noCascadeVehicleIds: ['c', 'd'] },
        { cascadeVehicleIds: [], noCascadeVehicleIds: ['d'] },
      ]),
    ).toEqual({ cascadeVehicleIds: ['a', 'b'], noCascadeVehicleIds: ['c', 'd'] });
  });
});

describe('the health.relay job', () => {
  it('runs on its schedule in a health worker and enqueues what a crash left owed', async () => {
    await storeRow(['owed-3'], false);
    await ingestInboxBatch(t.pool, adapters);
    await withTransaction(t.pool, (tx) =>
      tx.query(`UPDATE health_evaluations_owed SET owed_at = owed_at - interval '1 minute'`),
    );
    const workers = await t.startWorkers(['health']);
    try {
      await expect.poll(owedRows, { timeout: 15_000, interval: 100 }).toEqual([]);
    } finally {
      await workers.close();
    }
    const completed = await t.queues.queue('health').getJobs(['completed']);
    expect(completed.filter((job) => job.name === 'health.relay').map((job) => job.returnvalue)).toContainEqual({
      records: 1,
      evaluations: 1,
    });
  });
});
