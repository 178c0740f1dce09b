/**
 * Redis losing its data while every process keeps running: worker processes (`node
 * dist/server/main.js worker`) on a private redis-server that the test flushes, kills and
 * replaces with an empty one. Every repeating job comes back by itself, the work Redis held is
 * done from Postgres, and /readyz says not ready meanwhile.
 */
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/db/pool.js';
import { relayWebhookEvents } from '../../src/db/webhooks.js';
import { queueNames, schedulesOf } from '../../src/queue/catalog.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { startFakeProvider, type FakeProvider } from '../helpers/fake-provider.js';
import { createConnection, pushGeneric, readingCount } from '../helpers/ingest.js';
import { ProcessGroup, serviceEnv, type RedisServer, type ServiceProcess } from '../helpers/processes.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

/**
 * Long enough that the check after the flush happens before any process's next scheduler check
 * (the first comes this long after start), short enough to wait for the repair.
 */
const checkIntervalMs = 15_000;

const processes = new ProcessGroup();
let redis: RedisServer;
let t: TestApp;
let receiver: Receiver;
let samsaraApi: FakeProvider;
let workers: ServiceProcess[] = [];

/** Every repeating job's scheduler id (the job name). */
const scheduledJobs = () => schedulesOf(queueNames, t.config).map((s) => s.job);

beforeAll(async () => {
  redis = await processes.startRedis();
  t = await createTestApp({ REDIS_URL: redis.url, WEBHOOK_ALLOW_NETS: '127.0.0.1/32' });
  receiver = await startReceiver();
  samsaraApi = await startFakeProvider(() => ({
    body: { data: [], pagination: { endCursor: '', hasNextPage: false } },
  }));
}, 60_000);
afterAll(async () => {
  await processes.killAll();
  await t.close();
  await receiver.close();
  await samsaraApi.close();
});

function startWorkerProcess(): Promise<ServiceProcess> {
  return processes.start(
    ['worker'],
    serviceEnv(t, { WEBHOOK_ALLOW_NETS: '127.0.0.1/32', SCHEDULE_CHECK_INTERVAL_MS: String(checkIntervalMs) }),
  );
}

/** The job schedulers in the private Redis, read with a queue of our own. */
async function schedulerIds(): Promise<string[]> {
  const ids: string[] = [];
  for (const name of queueNames) {
    const queue = new Queue(name, { connection: redis.client, prefix: t.config.redisPrefix });
    ids.push(...(await queue.getJobSchedulers()).map((s) => s.key));
    await queue.close();
  }
  return ids.sort();
}

async function allReady(): Promise<boolean> {
  const answers = await Promise.all(workers.map((w) => w.readyz()));
  return answers.every((a) => a.status === 200);
}

describe('Redis loses its data under running workers', () => {
  it('FLUSHDB: readyz turns false, every schedule comes back in every process, and the lost work is done', async () => {
    const acme = await t.createCompany();
    const generic = await createConnection(t, acme.id, 'generic');
    const truck = await t.createVehicle(acme.id, {
      provider_connection_id: generic.id,
      provider_vehicle_id: 'flush-1',
    });
    const samsara = await createConnection(t, acme.id, 'samsara', {
      webhook_secret: Buffer.from('samsara-secret').toString('base64'),
      api_token: 'tok',
      base_url: samsaraApi.url,
    });
    await t.api('POST', '/webhook-subscriptions', acme.key, { url: `${receiver.url}/flush`, events: ['run.created'] });
    const van = await t.createVehicle(acme.id);
    const run = await t.admin('POST', `/companies/${acme.id}/service-requests`, {
      vehicle_id: van.id,
      items: [{ title: 'Oil change', type: 'oil_change' }],
    });
    expect(run.statusCode).toBe(201);
    // The relay committed its deliveries; their jobs are in Redis when Redis loses everything.
    const relayed = await withTransaction(t.pool, (tx) => relayWebhookEvents(tx, 100));
    expect(relayed.deliveries).toHaveLength(1);
    const pushed = await pushGeneric(t, 'generic', generic.id, generic.generated_secret!, {
      readings: [
        { vehicle: 'flush-1', ts: '2026-11-21T06:00:00Z', signals: { speed_kph: 10, fuel_percent: 50 } },
        { vehicle: 'flush-1', ts: '2026-11-21T06:00:10Z', signals: { speed_kph: 20, fuel_percent: 49 } },
      ],
    });
    expect(pushed.statusCode).toBe(202);
    // As if the loss came a minute after they were committed, past the sweeps' grace for work
    // still on its way to the queue.
    await t.pool.query(`UPDATE ingest_inbox SET received_at = received_at - interval '1 minute'`);
    await t.pool.query(`UPDATE webhook_deliveries SET created_at = created_at - interval '1 minute'`);
    // Paused, so the workers leave the queued jobs in Redis for the flush to lose.
    await t.queues.queue('ingest').pause();
    await t.queues.queue('webhooks').pause();

    workers = await Promise.all([startWorkerProcess(), startWorkerProcess()]);
    await expect.poll(allReady, { timeout: 20_000 }).toBe(true);
    const before = await schedulerIds();
    expect(before).toEqual(expect.arrayContaining([...scheduledJobs(), `pull-${samsara.id}`]));

    await redis.client.flushdb();
    expect(await schedulerIds()).toEqual([]);
    for (const worker of workers) {
      const { status, body } = await worker.readyz();
      expect(status).toBe(503);
      expect(body.error).toEqual({
        code: 'SERVICE_UNAVAILABLE',
        message: 'not ready',
        details: { checks: { postgres: 'ok', redis: 'ok', migrations: 'ok', schedules: 'failed' } },
      });
    }

    // Each process repairs on its own next check (within checkIntervalMs); upserts by id collide harmlessly.
    await expect.poll(allReady, { timeout: checkIntervalMs + 15_000, interval: 250 }).toBe(true);
    await expect.poll(schedulerIds, { timeout: 10_000 }).toEqual(before);
    const restored = await Promise.all(workers.map((w) => w.metrics()));
    expect(restored.join('\n')).toMatch(/job_schedulers_restored_total\{job="ingest.recover",process="worker"\} 1/);

    // The recovery sweeps found what Redis lost, in Postgres: the push and the delivery.
    await expect.poll(() => readingCount(t, truck.id), { timeout: 15_000 }).toBe(4);
    await expect.poll(() => receiver.received.filter((r) => r.path === '/flush').length, { timeout: 15_000 }).toBe(1);
    // The worker records the outcome after the receiver's answer reaches it: the receipt comes first.
    await expect
      .poll(async () => (await t.pool.query(`SELECT status FROM webhook_deliveries`)).rows, { timeout: 5_000 })
      .toEqual([{ status: 'succeeded' }]);
  }, 120_000);

  it('Redis unreachable, then an empty replacement: readyz names redis, then everything comes back', async () => {
    await redis.kill();
    for (const worker of workers) {
      await expect
        .poll(async () => (await worker.readyz()).body.error?.details?.checks?.redis, { timeout: 15_000 })
        .toBe('failed');
    }
    await redis.restart();
    await expect.poll(allReady, { timeout: checkIntervalMs + 20_000, interval: 250 }).toBe(true);
    await expect.poll(schedulerIds, { timeout: 10_000 }).toEqual(expect.arrayContaining(scheduledJobs()));
    // Still every process serves: a push after the failover is processed.
    const acme = await t.createCompany('After failover');
    const generic = await createConnection(t, acme.id, 'generic');
    const truck = await t.createVehicle(acme.id, {
      provider_connection_id: generic.id,
      provider_vehicle_id: 'failover-1',
    });
    const pushed = await pushGeneric(t, 'generic', generic.id, generic.generated_secret!, {
      readings: [{ vehicle: 'failover-1', ts: '2026-11-21T07:00:00Z', signals: { speed_kph: 30 } }],
    });
    expect(pushed.statusCode).toBe(202);
    await expect.poll(() => readingCount(t, truck.id), { timeout: 15_000 }).toBe(1);
  }, 120_000);
});
