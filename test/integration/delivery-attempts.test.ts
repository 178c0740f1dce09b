/**
 * Bounded delivery reads (issue 16): the monitoring and core deliveries lists carry each
 * delivery's newest 10 attempts with the total in `attempt_count`, and the console's tables show
 * the total; endpoint health covers only the last 24 hours (100 attempts at most). Each read is
 * also checked in Postgres's own counters for its transaction: the rows it fetched from the
 * attempts table stay within the bound whatever the history, and no attempts table is scanned.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listMonitoringDeliveries, loadEndpointHealth } from '../../src/db/monitoring-deliveries.js';
import { listDeliveries } from '../../src/db/webhooks.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { newConsoleUser } from '../helpers/console.js';
import { insertDelivery, v1 } from '../helpers/monitoring.js';

let t: TestApp;
let acme: { id: string; key: string };
let vehicleId: string;
const hook = 'http://127.0.0.1:9/hook';
const hourMs = 3_600_000;
const password = 'a long enough password';

beforeAll(async () => {
  t = await createTestApp({ WEBHOOK_ALLOW_NETS: '127.0.0.1/32' });
  acme = await t.createCompany('Acme Fleet');
  vehicleId = (await t.createVehicle(acme.id)).id;
});
afterAll(() => t.close());

async function monitoringSubscription(): Promise<{ id: string; companyId: string; vehicleId: string }> {
  const response = await v1(t, 'POST', '/runs/subscribe', acme.key, {
    vehicle_id: vehicleId,
    webhook_url: hook,
    tier: 'premium',
    events: ['hard_impact'],
  });
  expect(response.statusCode, response.body).toBe(201);
  return { id: response.json().data.id, companyId: acme.id, vehicleId };
}

/**
 * `deliveries` failed deliveries of the subscription, one a minute from `from`, each with
 * `attempts` attempts a second apart (the first `failedFirst` answered 500, the rest 200), written
 * in one statement as the pipeline would have over time.
 */
async function bulkMonitoringDeliveries(
  subscriptionId: string,
  o: { deliveries: number; attempts: number; from: Date; status?: number },
): Promise<void> {
  await t.pool.query(
    `WITH e AS (
       INSERT INTO monitoring_events (subscription_id, company_id, vehicle_id, kind, episode_key, severity, occurred_at,
                                      detected_at, body)
       SELECT $1, $2, $3, 'hard_impact', 'k' || i, 'critical', $4::timestamptz + i * interval '1 minute',
              $4::timestamptz + i * interval '1 minute', '{}'
       FROM generate_series(1, $5::int) i
       RETURNING id, detected_at
     ), d AS (
       INSERT INTO monitoring_deliveries (event_id, subscription_id, company_id, status, attempts_made, scheduled_attempts,
                                          created_at)
       SELECT id, $1, $2, 'failed', $6, 4, detected_at FROM e
       RETURNING id, created_at
     )
     INSERT INTO monitoring_attempts (delivery_id, attempt_number, trigger, started_at, duration_ms, status_code, error,
                                      subscription_id)
     SELECT d.id, n, CASE WHEN n <= 4 THEN 'scheduled' ELSE 'manual' END, d.created_at + n * interval '1 second', 10,
            $7::int, CASE WHEN $7::int >= 300 THEN 'HTTP ' || $7::int END, $1
     FROM d, generate_series(1, $6::int) n`,
    [subscriptionId, acme.id, vehicleId, o.from, o.deliveries, o.attempts, o.status ?? 500],
  );
  await t.pool.query('ANALYZE monitoring_events, monitoring_deliveries, monitoring_attempts');
}

/**
 * What `read` made Postgres read from `table`, from its counters for the transaction. On a
 * connection of its own: a backend's counters not yet flushed from earlier transactions would
 * show up in those of the next (Postgres 15).
 */
async function readsOf<T>(
  table: string,
  read: (client: pg.PoolClient) => Promise<T>,
): Promise<{ result: T; seqScans: number; rowsFetched: number }> {
  const pool = new pg.Pool({ connectionString: t.config.databaseUrl, max: 1 });
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await read(client);
    const stats = await client.query(
      `SELECT seq_scan::int, seq_tup_read::int, coalesce(idx_tup_fetch, 0)::int AS fetched
       FROM pg_stat_xact_user_tables WHERE relname = $1`,
      [table],
    );
    await client.query('COMMIT');
    const row = stats.rows[0];
    return { result, seqScans: row.seq_scan, rowsFetched: row.fetched + row.seq_tup_read };
  } finally {
    client.release();
    await pool.end();
  }
}

describe('monitoring deliveries list', () => {
  it('lists the newest 10 attempts of each delivery, oldest first, with attempt_count counting them all', async () => {
    const subscription = await monitoringSubscription();
    const from = new Date(Date.now() - 2 * hourMs);
    await bulkMonitoringDeliveries(subscription.id, { deliveries: 1, attempts: 25, from });
    const few = await insertDelivery(t, subscription, {
      kind: 'hard_impact',
      status: 'retrying',
      createdAt: new Date(Date.now() - hourMs),
      nextAttemptAt: new Date(Date.now() + 60_000),
      attempts: [{ at: new Date(Date.now() - hourMs), statusCode: 503, error: 'HTTP 503' }],
    });

    const response = await v1(t, 'GET', `/subscriptions/${subscription.id}/deliveries`, acme.key);
    expect(response.statusCode).toBe(200);
    const [newest, retried] = response.json().data;
    expect(newest).toMatchObject({ id: few.id, attempt_count: 1, attempts: [{ status_code: 503 }] });
    expect(retried.attempt_count).toBe(25);
    expect(retried.attempts).toHaveLength(10);
    const createdAt = new Date(from.getTime() + 60_000).getTime();
    // Attempts 16 to 25, each a second after the one before.
    expect(retried.attempts.map((a: { at: string }) => (new Date(a.at).getTime() - createdAt) / 1000)).toEqual([
      16, 17, 18, 19, 20, 21, 22, 23, 24, 25,
    ]);
    expect(retried.attempts[9]).toEqual({
      at: new Date(createdAt + 25_000).toISOString(),
      status_code: 500,
      error: 'HTTP 500',
      duration_ms: 10,
      trigger: 'manual',
    });
  });

  it("reads only the page's deliveries' newest attempts: 20 deliveries of 60 attempts cost at most 200 rows", async () => {
    const subscription = await monitoringSubscription();
    await bulkMonitoringDeliveries(subscription.id, {
      deliveries: 40,
      attempts: 60,
      from: new Date(Date.now() - 3 * hourMs),
    });
    const filter = { status: null, event: null, since: null };
    const { result, seqScans, rowsFetched } = await readsOf('monitoring_attempts', (client) =>
      listMonitoringDeliveries(client, acme.id, subscription.id, filter, 20, 10),
    );
    expect(result).toHaveLength(20);
    expect(result.every((d) => d.attempts.length === 10 && d.attemptCount === 60)).toBe(true);
    expect(seqScans).toBe(0);
    expect(rowsFetched).toBeGreaterThan(0);
    expect(rowsFetched).toBeLessThanOrEqual(20 * 10);
  });
});

describe('core deliveries list', () => {
  it('lists the newest 10 attempts with attempt_count, reading only those', async () => {
    const created = await t.api('POST', '/webhook-subscriptions', acme.key, {
      url: hook,
      events: ['run.created'],
    });
    expect(created.statusCode, created.body).toBe(201);
    const subscriptionId = created.json().data.id as string;
    // A core delivery gets one attempt; the read must stay bounded even for a history it never writes.
    await t.pool.query(
      `WITH e AS (
         INSERT INTO webhook_events (company_id, kind, payload) SELECT $2, 'run.created', '{}' FROM generate_series(1, 30)
         RETURNING id
       ), d AS (
         INSERT INTO webhook_deliveries (event_id, subscription_id, company_id, status, completed_at)
         SELECT id, $1, $2, 'failed', now() FROM e RETURNING id
       )
       INSERT INTO webhook_attempts (delivery_id, attempt_number, trigger, url, started_at, duration_ms, response_status)
       SELECT d.id, n, 'scheduled', $3, now() - (60 - n) * interval '1 second', 7, 500
       FROM d, generate_series(1, 60) n`,
      [subscriptionId, acme.id, hook],
    );
    await t.pool.query('ANALYZE webhook_deliveries, webhook_attempts');

    const response = await t.api('GET', `/webhook-subscriptions/${subscriptionId}/deliveries?limit=5`, acme.key);
    expect(response.statusCode).toBe(200);
    expect(response.json().meta).toMatchObject({ limit: 5, total: 30 });
    for (const delivery of response.json().data) {
      expect(delivery.attempt_count).toBe(60);
      expect(delivery.attempts.map((a: { attempt_number: number }) => a.attempt_number)).toEqual([
        51, 52, 53, 54, 55, 56, 57, 58, 59, 60,
      ]);
    }
    const { seqScans, rowsFetched } = await readsOf('webhook_attempts', (client) =>
      listDeliveries(client, acme.id, subscriptionId, 5, 0),
    );
    expect(seqScans).toBe(0);
    expect(rowsFetched).toBeLessThanOrEqual(5 * 10);
  });
});

describe('console delivery tables', () => {
  it('show every attempt counted, not the 10 listed', async () => {
    const company = await t.createCompany('Console Fleet');
    const vehicle = (await t.createVehicle(company.id)).id as string;
    const subscribed = await v1(t, 'POST', '/runs/subscribe', company.key, {
      vehicle_id: vehicle,
      webhook_url: hook,
      events: ['oil_change_needed'],
    });
    const subscription = { id: subscribed.json().data.id, companyId: company.id, vehicleId: vehicle };
    const start = Date.now() - hourMs;
    await insertDelivery(t, subscription, {
      kind: 'oil_change_needed',
      status: 'failed',
      createdAt: new Date(start),
      attempts: Array.from({ length: 14 }, (_, i) => ({
        at: new Date(start + i * 60_000),
        statusCode: 502,
        trigger: i < 4 ? ('scheduled' as const) : ('manual' as const),
      })),
    });
    const core = await t.api('POST', '/webhook-subscriptions', company.key, { url: hook, events: ['run.created'] });
    await t.pool.query(
      `WITH e AS (INSERT INTO webhook_events (company_id, kind, payload) VALUES ($2, 'run.created', '{}') RETURNING id),
            d AS (INSERT INTO webhook_deliveries (event_id, subscription_id, company_id, status, completed_at)
                  SELECT id, $1, $2, 'failed', now() FROM e RETURNING id)
       INSERT INTO webhook_attempts (delivery_id, attempt_number, trigger, url, started_at, duration_ms, response_status)
       SELECT d.id, n, 'scheduled', $3, now(), 7, 500 FROM d, generate_series(1, 12) n`,
      [core.json().data.id, company.id, hook],
    );

    const { get } = await newConsoleUser(t, company.id, 'dev@console.test', password);

    const monitoring = (await get('/console/monitoring')).body;
    expect(monitoring).toMatch(
      /<th scope="row">oil_change_needed<\/th>\s*<td><span[^>]*>failed<\/span><\/td>\s*<td>14<\/td>/,
    );
    expect(monitoring).toMatch(/<td>HTTP 502 in 12 ms<\/td>/);
    expect(monitoring).toContain('Endpoint health: 0 % of the last 14 attempts succeeded, in the last 24 hours');
    const webhooks = (await get('/console/webhooks')).body;
    expect(webhooks).toMatch(/<th scope="row">run.created<\/th>\s*<td><span[^>]*>failed<\/span><\/td>\s*<td>12<\/td>/);
  });
});

describe('endpoint health', () => {
  it('covers only the attempts of the last 24 hours, and reads only those', async () => {
    const subscription = await monitoringSubscription();
    // Two days of history before the window: 50 deliveries, 8 attempts each, the last ones successes.
    await bulkMonitoringDeliveries(subscription.id, {
      deliveries: 50,
      attempts: 8,
      from: new Date(Date.now() - 48 * hourMs),
      status: 200,
    });
    const path = `/subscriptions/${subscription.id}`;
    expect((await v1(t, 'GET', path, acme.key)).json().data.endpoint_health).toEqual({
      success_rate: null,
      attempts: 0,
      last_success_at: null,
      last_failure_at: null,
      last_failure: null,
    });

    const now = Date.now();
    const recent = (minutesAgo: number) => new Date(now - minutesAgo * 60_000);
    await insertDelivery(t, subscription, {
      kind: 'hard_impact',
      status: 'succeeded',
      createdAt: recent(30),
      attempts: [
        { at: recent(30), statusCode: null, error: 'connection refused' },
        { at: recent(29), statusCode: 503, error: 'HTTP 503' },
        { at: recent(24), statusCode: 200 },
      ],
    });
    // Just outside the window: a failure that would otherwise be the newest of the old ones.
    await insertDelivery(t, subscription, {
      kind: 'hard_impact',
      status: 'failed',
      createdAt: recent(24 * 60 + 1),
      attempts: [{ at: recent(24 * 60 + 1), statusCode: 500, error: 'HTTP 500' }],
    });
    const health = (await v1(t, 'GET', path, acme.key)).json().data.endpoint_health;
    expect(health).toEqual({
      success_rate: 1 / 3,
      attempts: 3,
      last_success_at: recent(24).toISOString(),
      last_failure_at: recent(29).toISOString(),
      last_failure: { status_code: 503, error: 'HTTP 503' },
    });

    const { result, seqScans, rowsFetched } = await readsOf('monitoring_attempts', (client) =>
      loadEndpointHealth(client, subscription.id, new Date()),
    );
    expect(result).toMatchObject({ attempts: 3, successes: 1 });
    expect(seqScans).toBe(0);
    expect(rowsFetched).toBeLessThanOrEqual(3);
  });
});

describe('recover', () => {
  it('looks at 1,000 failed deliveries a call at most, the oldest first; the next call takes what it left', async () => {
    const subscription = await monitoringSubscription();
    const from = new Date(Date.now() - 20 * hourMs);
    await bulkMonitoringDeliveries(subscription.id, { deliveries: 1_001, attempts: 1, from });
    const recover = () =>
      v1(t, 'POST', `/subscriptions/${subscription.id}/recover`, acme.key, { since: from.toISOString() });
    const due = async () =>
      (
        await t.pool.query(
          `SELECT created_at FROM monitoring_deliveries
           WHERE subscription_id = $1 AND next_trigger = 'recover' AND next_attempt_at IS NOT NULL ORDER BY created_at`,
          [subscription.id],
        )
      ).rows.map((r) => (r.created_at.getTime() - from.getTime()) / 60_000);

    const first = await recover();
    expect(first.statusCode, first.body).toBe(202);
    expect(first.json().data.queued).toBe(1_000);
    // Deliveries were created a minute apart from `from`: the first 1,000 minutes are queued.
    const queued = await due();
    expect(queued).toHaveLength(1_000);
    expect([queued[0], queued.at(-1)]).toEqual([1, 1_000]);

    // No worker sends here: the first 1,000 are still due, so the next call takes the one left.
    expect((await recover()).json().data.queued).toBe(1);
    expect((await due()).at(-1)).toBe(1_001);
  });
});
