import { QueueEvents } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { createMetrics } from '../../src/metrics.js';
import { createRedis } from '../../src/queue/connection.js';
import { Queues } from '../../src/queue/queues.js';
import { startWorkers, type RunningWorkers } from '../../workers/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let workers: RunningWorkers;
let queues: Queues;
const log = createLogger('silent');
const workerRedis = () => createRedis(t.config, 'worker', log);

beforeAll(async () => {
  t = await createTestApp();
  const connection = workerRedis();
  queues = new Queues(connection, t.config.redisPrefix);
  workers = await startWorkers(
    {
      config: t.config,
      pool: t.pool,
      log,
      metrics: createMetrics('t'),
      queues,
      now: () => new Date('2031-06-10T00:00:00Z'),
    },
    ['maintenance'],
    connection,
  );
});
afterAll(async () => {
  await workers.close();
  await queues.close();
  await t.close();
});

describe('maintenance worker', () => {
  it('schedules the daily partition job, which creates the months around now', async () => {
    const schedulers = await queues.queue('maintenance').getJobSchedulers();
    expect(schedulers.map((s) => [s.key, s.every])).toEqual([['maintenance.ensure-partitions', 24 * 3600 * 1000]]);
    await expect
      .poll(
        async () => {
          const { rows } = await t.pool.query(`SELECT to_regclass('readings_2031_08') IS NOT NULL AS present`);
          return rows[0].present;
        },
        { timeout: 15_000 },
      )
      .toBe(true);
  });

  it('rejects a malformed payload without running it', async () => {
    const events = new QueueEvents('maintenance', { connection: workerRedis(), prefix: t.config.redisPrefix });
    await events.waitUntilReady();
    const job = await queues
      .queue('maintenance')
      .add('maintenance.ensure-partitions', { unexpected: true }, { attempts: 3 });
    await expect(job.waitUntilFinished(events, 10_000)).rejects.toThrow(
      /invalid payload for maintenance.ensure-partitions/,
    );
    // UnrecoverableError: failed at once, not retried although three attempts were allowed.
    expect((await queues.queue('maintenance').getJob(job.id!))?.attemptsMade).toBe(1);
    await events.close();
  });
});
