import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { listApiRequestLogPartitions } from '../../src/db/api-request-log.js';
import { listReadingPartitions } from '../../src/db/readings.js';
import { createLogger } from '../../src/log.js';
import { createMetrics } from '../../src/metrics.js';
import { createRedis } from '../../src/queue/connection.js';
import { jobCatalog } from '../../src/queue/catalog.js';
import { Queues } from '../../src/queue/queues.js';
import { startWorkers, type RunningWorkers } from '../../workers/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createConnection } from '../helpers/ingest.js';

let t: TestApp;
let workers: RunningWorkers;
let queues: Queues;
const log = createLogger('silent');
const workerRedis = () => createRedis(t.config, 'worker', log);

beforeAll(async () => {
  t = await createTestApp({
    READINGS_RETENTION_MONTHS: '12',
    INBOX_RETENTION_DAYS: '30',
    WEBHOOK_RETENTION_DAYS: '90',
  });
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
  // The schedulers' first runs start at once; let them finish before a test seeds rows, or one may
  // purge a test's rows between its inserts and the run the test adds itself.
  await vi.waitFor(
    async () => {
      const counts = await queues.queue('maintenance').getJobCounts('waiting', 'active', 'prioritized');
      expect(counts.waiting! + counts.active! + counts.prioritized!).toBe(0);
    },
    { timeout: 30_000, interval: 100 },
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
      ['maintenance.purge-expired', jobCatalog['maintenance.purge-expired'].everyMs],
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

  it('purges processed inbox rows past INBOX_RETENTION_DAYS and settled webhook history past WEBHOOK_RETENTION_DAYS, nothing still owed', async () => {
    const company = (await t.admin('POST', '/companies', { name: 'Retention' })).json().data.id;
    const connection = await createConnection(t, company, 'generic');
    const inbox = async (label: string, receivedAt: string, state: 'processed' | 'pending' | 'parked') =>
      t.pool.query(
        `INSERT INTO ingest_inbox (connection_id, provider, received_at, payload, processed_at, parked_at, error)
         VALUES ($1, 'generic', $2, $3, CASE WHEN $4 = 'processed' THEN $2::timestamptz END,
                 CASE WHEN $4 = 'parked' THEN $2::timestamptz END, NULL)`,
        [connection.id, receivedAt, label, state],
      );
    // Now is 2031-06-10; 30 days of inbox reach back to 2031-05-11.
    await inbox('old processed', '2031-05-01T00:00:00Z', 'processed');
    await inbox('recent processed', '2031-06-01T00:00:00Z', 'processed');
    await inbox('old pending', '2031-01-01T00:00:00Z', 'pending');
    await inbox('old parked', '2031-01-01T00:00:00Z', 'parked');

    const subscription = (
      await t.pool.query(
        `INSERT INTO webhook_subscriptions (company_id, url, events, secret_ciphertext)
         VALUES ($1, 'https://hooks.example.com/x', '{run.created}', '\\x00') RETURNING id`,
        [company],
      )
    ).rows[0].id;
    const event = async (
      label: string,
      occurredAt: string,
      delivery: 'succeeded' | 'failed' | 'pending' | 'sending' | 'queued',
      completedAt = occurredAt,
    ) => {
      const id = (
        await t.pool.query(
          `INSERT INTO webhook_events (company_id, kind, payload, occurred_at) VALUES ($1, 'run.created', $2, $3) RETURNING id`,
          [company, JSON.stringify({ label }), occurredAt],
        )
      ).rows[0].id;
      // Inserting the event queued it for the relay (the trigger of migrations/0020); a relayed one is off the queue.
      if (delivery === 'queued') return;
      await t.pool.query(`DELETE FROM webhook_relay_queue WHERE event_id = $1`, [id]);
      const settled = delivery === 'succeeded' || delivery === 'failed';
      const deliveryId = (
        await t.pool.query(
          `INSERT INTO webhook_deliveries (event_id, subscription_id, company_id, status, completed_at)
           VALUES ($1, $2, $3, $4, $5) RETURNING id`,
          [id, subscription, company, delivery, settled ? completedAt : null],
        )
      ).rows[0].id;
      if (settled)
        await t.pool.query(
          `INSERT INTO webhook_attempts (delivery_id, attempt_number, trigger, url, started_at, duration_ms, response_status)
           VALUES ($1, 1, 'scheduled', 'https://hooks.example.com/x', $2, 5, 204)`,
          [deliveryId, occurredAt],
        );
    };
    // 90 days of webhook history reach back to 2031-03-12.
    await event('old succeeded', '2031-01-01T00:00:00Z', 'succeeded');
    await event('old failed', '2031-01-01T00:00:00Z', 'failed');
    await event('old pending', '2031-01-01T00:00:00Z', 'pending');
    await event('old sending', '2031-01-01T00:00:00Z', 'sending');
    await event('old queued', '2031-01-01T00:00:00Z', 'queued');
    // Given up as worker_lost only lately: its real attempt record may still come.
    await event('old settled lately', '2031-01-01T00:00:00Z', 'failed', '2031-06-09T23:00:00Z');
    await event('recent settled', '2031-06-01T00:00:00Z', 'succeeded');

    const job = await queues.queue('maintenance').add('maintenance.purge-expired', {});
    await expect.poll(() => job.getState(), { timeout: 15_000 }).toBe('completed');
    expect((await queues.queue('maintenance').getJob(job.id!))!.returnvalue).toEqual({
      inboxRowsDeleted: 1,
      webhookEventsDeleted: 2,
      consoleFlashesDeleted: 0,
      auditEventsDeleted: 0,
    });
    const inboxLeft = await t.pool.query(`SELECT payload FROM ingest_inbox WHERE connection_id = $1 ORDER BY payload`, [
      connection.id,
    ]);
    expect(inboxLeft.rows.map((r) => r.payload)).toEqual(['old parked', 'old pending', 'recent processed']);
    const events = await t.pool.query(
      `SELECT e.payload ->> 'label' AS label, count(d.id)::int AS deliveries, count(a.delivery_id)::int AS attempts
       FROM webhook_events e LEFT JOIN webhook_deliveries d ON d.event_id = e.id LEFT JOIN webhook_attempts a ON a.delivery_id = d.id
       WHERE e.company_id = $1 GROUP BY 1 ORDER BY 1`,
      [company],
    );
    expect(events.rows).toEqual([
      { label: 'old pending', deliveries: 1, attempts: 0 },
      { label: 'old queued', deliveries: 0, attempts: 0 },
      { label: 'old sending', deliveries: 1, attempts: 0 },
      { label: 'old settled lately', deliveries: 1, attempts: 1 },
      { label: 'recent settled', deliveries: 1, attempts: 1 },
    ]);
    const orphans = await t.pool.query(
      `SELECT count(*)::int AS n FROM webhook_deliveries d WHERE d.company_id = $1 AND NOT EXISTS (SELECT FROM webhook_events e WHERE e.id = d.event_id)`,
      [company],
    );
    expect(orphans.rows[0].n).toBe(0);
  });

  it('deletes console flashes nobody will read: 10 minutes old, or of a session that has ended', async () => {
    // The worker's clock is 2031-06-10T00:00:00Z; sessions end after 30 idle minutes or 12 hours.
    const company = (await t.admin('POST', '/companies', { name: 'Flashes' })).json().data.id;
    const user = await t.admin('POST', `/companies/${company}/users`, {
      email: 'flash@maintenance.test',
      name: 'Dev',
      password: 'a long enough password',
    });
    expect(user.statusCode).toBe(201);
    const at = (minutesBefore: number) => new Date(Date.parse('2031-06-10T00:00:00Z') - minutesBefore * 60_000);
    const session = async (label: string, createdMinutesAgo: number, seenMinutesAgo: number) =>
      (
        await t.pool.query(
          `INSERT INTO console_sessions (user_id, token_hash, csrf_token, created_at, last_seen_at)
           VALUES ($1, sha256($2::bytea), 'csrf', $3, $4) RETURNING id`,
          [user.json().data.id, Buffer.from(label), at(createdMinutesAgo), at(seenMinutesAgo)],
        )
      ).rows[0].id as string;
    const flash = (sessionId: string, label: string, minutesAgo: number) =>
      t.pool.query(
        `INSERT INTO console_flashes (session_id, page, payload_ciphertext, created_at) VALUES ($1, $2, '\\x00', $3)`,
        [sessionId, label, at(minutesAgo)],
      );
    const live = await session('live', 60, 1);
    await flash(live, 'just written', 2);
    await flash(live, 'never read', 11);
    await flash(await session('idle', 120, 31), 'of an idle session', 1);
    await flash(await session('too old', 13 * 60, 1), 'of a session past 12 hours', 1);

    const job = await queues.queue('maintenance').add('maintenance.purge-expired', {});
    await expect.poll(() => job.getState(), { timeout: 15_000 }).toBe('completed');
    expect((await queues.queue('maintenance').getJob(job.id!))!.returnvalue).toMatchObject({
      consoleFlashesDeleted: 3,
    });
    const left = await t.pool.query(`SELECT page FROM console_flashes`);
    expect(left.rows.map((r) => r.page)).toEqual(['just written']);
  });

  it('keeps the request log a week by dropping whole days, with partitions a week ahead', async () => {
    // The worker's clock is 2031-06-10T00:00:00Z: 2031-06-02 ended more than 7 days before it, the 3rd did not.
    await t.pool.query(`SELECT ensure_api_request_log_partitions('2031-06-01', 3)`);
    const job = await queues.queue('maintenance').add('maintenance.ensure-partitions', {});
    await expect.poll(() => job.getState(), { timeout: 15_000 }).toBe('completed');
    const days = (await listApiRequestLogPartitions(t.pool)).map((p) => p.day);
    expect(days).toEqual([
      '2031-06-03',
      '2031-06-09',
      '2031-06-10',
      '2031-06-11',
      '2031-06-12',
      '2031-06-13',
      '2031-06-14',
      '2031-06-15',
      '2031-06-16',
      '2031-06-17',
    ]);
  });

  it('purges audit events past their 365 days', async () => {
    const company = (await t.admin('POST', '/companies', { name: 'Audit' })).json().data.id;
    const event = (label: string, occurredAt: string) =>
      t.pool.query(
        `INSERT INTO audit_events (company_id, actor_kind, actor_id, actor_label, action, target_type, target_id, occurred_at)
         VALUES ($1, 'user', gen_random_uuid(), $2, 'sign_in.succeeded', 'user', 'x', $3)`,
        [company, label, occurredAt],
      );
    // 365 days before 2031-06-10 is 2030-06-10.
    await event('old', '2030-06-09T23:59:59Z');
    await event('kept', '2030-06-10T00:00:01Z');
    const job = await queues.queue('maintenance').add('maintenance.purge-expired', {});
    await expect.poll(() => job.getState(), { timeout: 15_000 }).toBe('completed');
    expect((await queues.queue('maintenance').getJob(job.id!))!.returnvalue).toMatchObject({ auditEventsDeleted: 1 });
    const left = await t.pool.query(`SELECT actor_label FROM audit_events WHERE company_id = $1`, [company]);
    expect(left.rows.map((r) => r.actor_label)).toEqual(['kept']);
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
