/**
 * Redis loses everything (FLUSHDB, as after a failover to an empty replica) in the middle of a
 * push stream, with real API and worker processes on a redis-server of this test's own. Nothing
 * is restarted: the queued jobs and every repeating schedule are gone, and the inbox recovery
 * sweep (its schedule restored by the workers themselves) must still get every accepted reading
 * stored. And the per-connection pull schedulers, gone with the rest, come back with the repair:
 * a provider feed is asked again within its pull interval plus 30 s of every flush, and of a loss
 * of its scheduler alone (the catalog's intact), whether the pull process runs or starts after it.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { PoolClient } from '../../src/db/pool.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { startFakeProvider } from '../helpers/fake-provider.js';
import { pullSchedulerId } from '../../src/ingest/pulls.js';
import { createConnection } from '../helpers/ingest.js';
import { ProcessGroup, serviceEnv, type RedisServer } from '../helpers/processes.js';
import {
  countReadings,
  createStreamConnection,
  inboxSummary,
  planPushStream,
  startPushStream,
  type PlannedPush,
} from '../helpers/push-stream.js';

const readingsPerPush = 20;
// Pushes before, during (queued behind held workers) and after the loss. Each job after the loss
// takes at most 7 older pending rows with it, so 20 jobs cannot pick up the ~190 rows whose jobs
// were lost: only the recovery sweep can.
const before = 50;
const queued = 200;
const after = 20;
/** Schedules come back within a minute; rows younger than 30 s are left to their own jobs. */
const recoveryTimeoutMs = 110_000;

const services = new ProcessGroup();
const redisServer = new ProcessGroup();
let redis: RedisServer;
let t: TestApp;

beforeAll(async () => {
  redis = await redisServer.startRedis();
  t = await createTestApp({ REDIS_URL: redis.url, WEBHOOK_ALLOW_NETS: '127.0.0.1/32' });
});
afterAll(async () => {
  try {
    await services.killAll();
    await t?.close();
  } finally {
    await redisServer.killAll();
  }
});

async function push(pushes: readonly PlannedPush[], apiUrl: string) {
  const result = await startPushStream(pushes, { apiUrl: () => apiUrl }).done;
  expect(result.accepted).toBe(pushes.length);
}

it('FLUSHDB mid-stream: every accepted reading is stored, without restarting any process', async () => {
  const connections = [await createStreamConnection(t, 'flush-a', 4), await createStreamConnection(t, 'flush-b', 4)];
  const connectionIds = connections.map((c) => c.id);
  const plan = planPushStream(connections, {
    pushes: before + queued + after,
    readingsPerPush,
    start: new Date(Date.now() - 24 * 3600 * 1000),
  });
  const api = await services.start(['api'], serviceEnv(t, { REDIS_URL: redis.url }));
  await services.start(['worker', 'ingest', 'health'], serviceEnv(t, { REDIS_URL: redis.url }));

  await push(plan.pushes.slice(0, before), api.url);
  const firstReadings = plan.readings.slice(0, before * readingsPerPush);
  await expect
    .poll(() => countReadings(t.pool, firstReadings), { timeout: 30_000, interval: 250 })
    .toEqual({ stored: firstReadings.length, matching: firstReadings.length });

  // A backlog at the moment Redis is lost: the workers wait on the vehicle rows (as behind a slow
  // database), so the next pushes stay pending in the inbox with their drains queued in Redis
  // (one per shard, not one per push: src/queue/enqueue-ingest.ts).
  const blocker: PoolClient = await t.pool.connect();
  try {
    await blocker.query('BEGIN');
    await blocker.query('SELECT 1 FROM vehicles WHERE provider_connection_id = ANY($1::uuid[]) FOR UPDATE', [
      connectionIds,
    ]);
    await push(plan.pushes.slice(before, before + queued), api.url);
    expect(await t.queues.queue('ingest').getWaitingCount()).toBeGreaterThan(0);
    const { rows } = await t.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ingest_inbox WHERE processed_at IS NULL AND connection_id = ANY($1::uuid[])`,
      [connectionIds],
    );
    expect(rows[0]!.n).toBe(queued);

    expect(await redis.client.flushdb()).toBe('OK');
    await blocker.query('COMMIT');
  } finally {
    blocker.release();
  }
  const lostAt = Date.now();

  await push(plan.pushes.slice(before + queued), api.url);
  await expect
    .poll(() => countReadings(t.pool, plan.readings), { timeout: recoveryTimeoutMs, interval: 500 })
    .toEqual({ stored: plan.readings.length, matching: plan.readings.length });
  console.info(`redis-loss: every accepted reading stored ${Math.round((Date.now() - lostAt) / 1000)} s after FLUSHDB`);
  expect(await inboxSummary(t.pool, connectionIds, readingsPerPush)).toMatchObject({
    payloads: plan.pushes.length,
    pending: 0,
    errors: 0,
    payloadsWithAllSamples: plan.pushes.length,
  });
}, 200_000);

/** The fake provider's pull interval; the deadline after each loss is this plus 30 s. */
const pullIntervalSeconds = 30;
const flushes = 3;

it('Redis loses the pull schedulers (all of its data, or only the per-connection ones, while the pull process runs or is down): every per-connection pull is polled within its interval plus 30 s', async () => {
  // Only the pull queue's process: what restores its schedulers is the repair in the process that owns it.
  await services.killAll();
  const samsaraApi = await startFakeProvider(() => ({
    body: { data: [], pagination: { endCursor: '', hasNextPage: false } },
  }));
  const pullEnv = serviceEnv(t, {
    REDIS_URL: redis.url,
    WEBHOOK_ALLOW_NETS: '127.0.0.1/32',
    SCHEDULE_CHECK_INTERVAL_MS: '2000',
  });
  try {
    const company = await t.createCompany('Pulled Fleet');
    const connection = await createConnection(
      t,
      company.id,
      'samsara',
      { webhook_secret: Buffer.from('samsara-secret').toString('base64'), api_token: 'tok', base_url: samsaraApi.url },
      { pull_interval_seconds: pullIntervalSeconds },
    );
    let pullProcess = await services.start(['worker', 'pull'], pullEnv);
    const feedRequests = () => samsaraApi.requests.filter((r) => r.path === '/fleet/vehicles/stats/feed').length;
    await expect.poll(feedRequests, { timeout: 30_000, interval: 100 }).toBeGreaterThan(0);
    const pullQueue = t.queues.queue('pull');
    /** Loses the connection's feed scheduler alone (its next run with it), between two of its runs. */
    const loseConnectionScheduler = async () => {
      await expect.poll(() => pullQueue.getActiveCount(), { timeout: 10_000, interval: 20 }).toBe(0);
      await pullQueue.removeJobScheduler(pullSchedulerId(connection.id));
    };
    /** Waits for the next feed request after a loss at `lostAt`, within the pull interval plus 30 s. */
    const polledAgain = async (label: string, lostAt: number, before: number) => {
      await expect
        .poll(feedRequests, { timeout: (pullIntervalSeconds + 30) * 1000, interval: 100 })
        .toBeGreaterThan(before);
      console.info(`redis-loss: feed polled ${((Date.now() - lostAt) / 1000).toFixed(1)} s after ${label}`);
    };

    // Part of Redis's data lost while the pull process runs (a failover to a replica that was behind):
    // the catalog's schedulers are intact, only the connection's is gone.
    await loseConnectionScheduler();
    await polledAgain('the loss of its scheduler alone', Date.now(), feedRequests());

    // The same while no process of the pull queue runs: the next one to start restores it.
    await expect.poll(() => pullQueue.getActiveCount(), { timeout: 10_000, interval: 20 }).toBe(0);
    await pullProcess.kill();
    await pullQueue.removeJobScheduler(pullSchedulerId(connection.id));
    const lostWhileDown = Date.now();
    const beforeStart = feedRequests();
    pullProcess = await services.start(['worker', 'pull'], pullEnv);
    await polledAgain('the loss of its scheduler while no pull process ran', lostWhileDown, beforeStart);

    for (let flush = 0; flush < flushes; flush++) {
      // At a random moment of the schedule checks' cycle.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 4000));
      expect(await redis.client.flushdb()).toBe('OK');
      await polledAgain(`FLUSHDB ${flush + 1}`, Date.now(), feedRequests());
    }
  } finally {
    await samsaraApi.close();
  }
}, 420_000);
