import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listReadingPartitions } from '../../src/db/readings.js';
import { createLogger } from '../../src/log.js';
import { createMetrics } from '../../src/metrics.js';
import { createRedis } from '../../src/queue/connection.js';
import { jobCatalog } from '../../src/queue/catalog.js';
import { Queues } from '../../src/queue/queues.js';
import { startWorkers, type RunningWorkers } from '../../workers/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let workers: RunningWorkers;
let queues: Queues;
const log = createLogger('silent');
const workerRedis = () => createRedis(t.config, 'worker', log);

beforeAll(async () => {
  t = await createTestApp({ READINGS_RETENTION_MONTHS: '12' });
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
    expect(schedulers.map((s) => [s.key, s.every]).sort()).toEqual([
      ['maintenance.ensure-partitions', jobCatalog['maintenance.ensure-partitions'].everyMs],
      ['maintenance.purge-idempotency-keys', jobCatalog['maintenance.purge-idempotency-keys'].everyMs],
      ['maintenance.purge-monitoring', jobCatalog['maintenance.purge-monitoring'].everyMs],
    ]);
    await expect
      .poll(
        async () => {
          const { rows } = await t.pool.query(`SELECT to_regclass('readings_2031_08') IS NOT NULL AS present`);
          return rows[0].present;
        },
        { timeout: 15_000 },
      )
      .toBe(true);
    // Retention of 12 whole months before June 2031: every month before June 2030 is dropped.
    await expect
      .poll(async () => (await listReadingPartitions(t.pool)).map((p) => p.month), { timeout: 15_000 })
      .toEqual(['2031-05-01', '2031-06-01', '2031-07-01', '2031-08-01', '2031-09-01']);
  });

  it('schedules the hourly purge of Idempotency-Key answers past their 24 hours', async () => {
    const company = (await t.admin('POST', '/companies', { name: 'Keys' })).json().data.id;
    const key = (name: string, expiresAt: string) =>
      t.pool.query(
        `INSERT INTO idempotency_keys (company_id, endpoint, key, request_hash, claimed_at, expires_at)
         VALUES ($1, '/v1/instant/verify', $2, 'h', $3::timestamptz - interval '24 hours', $3)`,
        [company, name, expiresAt],
      );
    await key('expired', '2031-06-09T23:59:59Z');
    await key('kept', '2031-06-10T00:00:01Z');
    await queues.queue('maintenance').add('maintenance.purge-idempotency-keys', {});
    await expect
      .poll(
        async () =>
          (await t.pool.query(`SELECT key FROM idempotency_keys WHERE company_id = $1`, [company])).rows.map(
            (r) => r.key,
          ),
        { timeout: 15_000 },
      )
      .toEqual(['kept']);
  });

  it('rejects a malformed payload without running it', async () => {
    const queue = queues.queue('maintenance');
    const job = await queue.add('maintenance.ensure-partitions', { unexpected: true }, { attempts: 3 });
    // Polled rather than awaited through QueueEvents, whose stream may start reading after the
    // failure was already written (a race that shows on a slow machine or a Redis Cluster).
    await expect.poll(() => queue.getJobState(job.id!), { timeout: 15_000 }).toBe('failed');
    const failed = (await queue.getJob(job.id!))!;
    expect(failed.failedReason).toMatch(/^invalid payload for maintenance.ensure-partitions/);
    // UnrecoverableError: failed at once, not retried although three attempts were allowed.
    expect(failed.attemptsMade).toBe(1);
  });
});
