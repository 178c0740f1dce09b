/**
 * The worker shells' contract with BullMQ: dispatch by the catalog's handler maps, re-enqueueing
 * inbox rows whose earlier job BullMQ still keeps, and repairing a job scheduler that Redis lost.
 */
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedis } from '../../src/queue/connection.js';
import { drainShardOf, enqueueInboxRows } from '../../src/queue/enqueue-ingest.js';
import { createLogger } from '../../src/log.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createConnection, drainInbox, pushGeneric, readingCount } from '../helpers/ingest.js';

let t: TestApp;

beforeAll(async () => {
  // The workers' own periodic repair stays out of the way: the scheduler test below breaks and
  // repairs by hand, and a background repair between its steps would race it.
  t = await createTestApp({ SCHEDULE_CHECK_INTERVAL_MS: '600000' });
});
afterAll(async () => {
  await t.close();
});

async function settledJob(queueName: 'maintenance', id: string): Promise<Job> {
  const queue = t.queues.queue(queueName);
  await expect.poll(async () => queue.getJobState(id), { timeout: 10_000 }).toMatch(/^(completed|failed)$/);
  return (await queue.getJob(id))!;
}

describe('dispatch from the job catalog', () => {
  it('a job name the queue has no handler for, or a payload the catalog refuses, fails at once without retries', async () => {
    const workers = await t.startWorkers(['maintenance']);
    const queue = t.queues.queue('maintenance');
    const unknown = await queue.add('maintenance.vacuum', {}, { attempts: 3 });
    // A job of another queue is just as unknown here.
    const foreign = await queue.add('ingest.recover', {}, { attempts: 3 });
    const malformed = await queue.add('maintenance.ensure-partitions', { months: 2 }, { attempts: 3 });
    const valid = await queue.add('maintenance.ensure-partitions', {}, { attempts: 3 });

    for (const [job, reason] of [
      [unknown, 'unknown job maintenance.vacuum on the maintenance queue'],
      [foreign, 'unknown job ingest.recover on the maintenance queue'],
      [malformed, 'invalid payload for maintenance.ensure-partitions: /months'],
    ] as const) {
      const settled = await settledJob('maintenance', job.id!);
      expect(await settled.getState()).toBe('failed');
      expect(settled.failedReason).toMatch(new RegExp(`^${reason}`));
      expect(settled.attemptsMade).toBe(1);
    }
    const done = await settledJob('maintenance', valid.id!);
    expect(done.returnvalue).toEqual({
      partitionsCreated: 0,
      partitionsDropped: 0,
      requestLogPartitionsCreated: 0,
      requestLogPartitionsDropped: 0,
    });
    await workers.close();
  });
});

describe('re-enqueueing an inbox row', () => {
  it('runs it again although BullMQ keeps its earlier failed or completed job; while queued it is added once', async () => {
    const acme = await t.createCompany();
    const connection = await createConnection(t, acme.id, 'generic');
    const truck = await t.createVehicle(acme.id, { provider_connection_id: connection.id, provider_vehicle_id: 'k-1' });
    const pushed = await pushGeneric(t, 'generic', connection.id, connection.generated_secret!, {
      readings: [{ vehicle: 'k-1', ts: '2026-11-21T06:00:00Z', signals: { speed_kph: 12, fuel_percent: 40 } }],
    });
    expect(pushed.statusCode).toBe(202);
    const inboxId: number = pushed.json().data.inbox_id;

    // Its job fails for good (as after every attempt failed while Postgres was away) and is kept.
    const connectionForFailer = createRedis(t.config, 'worker', createLogger('silent'));
    const failer = new Worker(
      'ingest',
      async () => {
        throw new UnrecoverableError('postgres was away');
      },
      { connection: connectionForFailer, prefix: t.config.redisPrefix },
    );
    await expect.poll(() => t.queues.queue('ingest').getFailedCount(), { timeout: 10_000 }).toBe(1);
    await failer.close();
    connectionForFailer.disconnect();

    // What the recovery sweep and a replay do: enqueue the row again, twice while it waits.
    await enqueueInboxRows(t.queues, [inboxId]);
    await enqueueInboxRows(t.queues, [inboxId]);
    expect(await t.queues.queue('ingest').getWaitingCount()).toBe(1);
    const workers = await t.startWorkers(['ingest']);
    await drainInbox(t);
    expect(await readingCount(t, truck.id)).toBe(2);

    // Its job is kept as completed now; a row that needs another pass still gets one.
    await t.pool.query(`UPDATE ingest_inbox SET processed_at = NULL WHERE id = $1`, [inboxId]);
    await enqueueInboxRows(t.queues, [inboxId]);
    await drainInbox(t);
    expect(await readingCount(t, truck.id)).toBe(2);
    await workers.close();
  });
});

describe('re-enqueueing an inbox row while its drain runs', () => {
  it('runs the drain again after that run: it may have made its last claim before the row committed', async () => {
    // The window the test above could fall into under load: its drain returns at the row's commit,
    // while the job still hands its vehicles to the health stage; a replay enqueued then must run.
    const inboxId = 987_654;
    const connection = createRedis(t.config, 'worker', createLogger('silent'));
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const runs: number[] = [];
    const worker = new Worker(
      'ingest',
      async (job: Job<{ shard: number }>) => {
        runs.push(job.data.shard);
        if (runs.length === 1) await held;
      },
      { connection, prefix: t.config.redisPrefix },
    );
    await enqueueInboxRows(t.queues, [inboxId]);
    await expect.poll(() => runs.length, { timeout: 10_000 }).toBe(1);
    await enqueueInboxRows(t.queues, [inboxId]);
    release();
    await expect.poll(() => runs, { timeout: 10_000 }).toEqual([drainShardOf(inboxId), drainShardOf(inboxId)]);
    await worker.close();
    connection.disconnect();
  });
});

describe('keeping job schedulers', () => {
  it('finds a scheduler Redis lost, or one left without a next job, and recreates it', async () => {
    const workers = await t.startWorkers(['health']);
    const queue = t.queues.queue('health');
    expect(await workers.schedules.findBroken()).toEqual([]);

    await queue.removeJobScheduler('health.sweep');
    expect(await workers.schedules.findBroken()).toEqual(['health.sweep']);
    await expect(workers.schedules.assertLive()).rejects.toThrow('job schedulers missing in Redis: health.sweep');
    expect(await workers.schedules.repair()).toEqual(['health.sweep']);
    expect(await workers.schedules.findBroken()).toEqual([]);

    // The scheduler survives but its next job is gone (a partial loss): nothing would ever run.
    // The repaired scheduler's first job may run at once; wait until its next one is the delayed one.
    const nextJob = async () => `repeat:health.sweep:${(await queue.getJobScheduler('health.sweep'))!.next}`;
    await expect.poll(async () => queue.getJobState(await nextJob()), { timeout: 10_000 }).toBe('delayed');
    const next = await nextJob();
    await t.redis.del(`${t.config.redisPrefix}:health:${next}`);
    await t.redis.zrem(`${t.config.redisPrefix}:health:delayed`, next);
    expect(await workers.schedules.findBroken()).toEqual(['health.sweep']);
    expect(await workers.schedules.repair()).toEqual(['health.sweep']);
    expect(await workers.schedules.findBroken()).toEqual([]);
    await workers.close();
  });
});
