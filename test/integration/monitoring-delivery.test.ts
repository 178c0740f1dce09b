/**
 * Monitoring delivery (issue 9) against real receivers on 127.0.0.1, with events made by the real
 * ingest path: at most 4 scheduled attempts (initial + MONITORING_RETRY_DELAYS_MS, short here),
 * the same signed bytes every time; a retry surviving a worker restart and a FLUSHDB of a private
 * Redis; a dead worker's send recorded as worker_lost; manual retry; recover; tenant isolation of
 * both routes; the retention purge by tier; the monthly metering record.
 */
import { createHmac } from 'node:crypto';
import { lanesPerCompany } from '../../src/delivery/lane-slots.js';
import { deliverySlotsPerProcess } from '../../src/delivery/lane-slots.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { monitoredVehiclesOfMonth } from '../../src/db/monitoring-metering.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createConnection, pushGeneric, settle } from '../helpers/ingest.js';
import { insertDelivery, v1 } from '../helpers/monitoring.js';
import { ProcessGroup, type RedisServer } from '../helpers/processes.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import type { RunningWorkers } from '../../workers/index.js';

const retryDelaysMs = [300, 600, 900];
const processes = new ProcessGroup();
let redis: RedisServer;
let t: TestApp;
let receiver: Receiver;
let acme: { id: string; key: string };
let rival: { id: string; key: string };
let connection: { id: string; secret: string };
let webhooks: RunningWorkers;
let nextVehicle = 0;
/** Impacts come 40 s apart (one hard_impact per 30 s window), a minute after the subscriptions. */
let nextImpactAt = Date.now() + 60_000;

beforeAll(async () => {
  redis = await processes.startRedis();
  t = await createTestApp({
    REDIS_URL: redis.url,
    WEBHOOK_ALLOW_NETS: '127.0.0.1/32',
    MONITORING_RETRY_DELAYS_MS: retryDelaysMs.join(','),
    SCHEDULE_CHECK_INTERVAL_MS: '500',
    WEBHOOK_TIMEOUT_MS: '2000',
  });
  receiver = await startReceiver();
  acme = await t.createCompany('Acme Fleet');
  rival = await t.createCompany('Rival Fleet');
  const created = await createConnection(t, acme.id, 'generic');
  connection = { id: created.id, secret: created.generated_secret! };
  await t.startWorkers(['ingest', 'health', 'maintenance']);
  webhooks = await t.startWorkers(['webhooks']);
}, 60_000);
afterAll(async () => {
  await t.close();
  await receiver.close();
  await processes.killAll();
});

async function subscribedVehicle(path: string) {
  const providerVehicleId = `d-${++nextVehicle}`;
  const vehicle = await t.createVehicle(acme.id, {
    provider_connection_id: connection.id,
    provider_vehicle_id: providerVehicleId,
  });
  const response = await v1(t, 'POST', '/runs/subscribe', acme.key, {
    vehicle_id: vehicle.id,
    webhook_url: `${receiver.url}${path}`,
    tier: 'premium',
    events: ['hard_impact'],
  });
  expect(response.statusCode, response.body).toBe(201);
  const data = response.json().data as { id: string; signing_secret: string };
  return { providerVehicleId, vehicleId: vehicle.id as string, subscriptionId: data.id, secret: data.signing_secret };
}

/** A collision reported by the provider: one hard_impact event, one delivery. */
async function impact(providerVehicleId: string) {
  const ts = new Date((nextImpactAt += 40_000)).toISOString();
  const response = await pushGeneric(t, 'generic', connection.id, connection.secret, {
    readings: [{ vehicle: providerVehicleId, ts, signals: { events: [{ type: 'impact', g: 2 }] } }],
  });
  expect(response.statusCode).toBe(202);
  await settle(t);
}

async function deliveries(subscriptionId: string, key = acme.key) {
  const response = await v1(t, 'GET', `/subscriptions/${subscriptionId}/deliveries`, key);
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data as Array<{
    id: string;
    event_id: string;
    status: string;
    next_attempt_at: string | null;
    attempts: Array<{ status_code: number | null; trigger: string; error: string | null }>;
  }>;
}

const requestsTo = (path: string) => receiver.received.filter((r) => r.path === path);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('retries', () => {
  it('a failing receiver gets 4 attempts of the same signed bytes, the waits between them, and never a 5th', async () => {
    receiver.answer('/fail', { status: 500 });
    const v = await subscribedVehicle('/fail');
    await impact(v.providerVehicleId);
    await expect.poll(async () => (await deliveries(v.subscriptionId))[0]?.status, { timeout: 30_000 }).toBe('failed');
    // Longer than the whole schedule again plus a due sweep: nothing more comes.
    await pause(retryDelaysMs.reduce((a, b) => a + b, 0) + 1_000);
    const requests = requestsTo('/fail');
    expect(requests).toHaveLength(4);
    const bodies = new Set(requests.map((r) => r.rawBody.toString('utf8')));
    expect(bodies.size).toBe(1);
    const signature = `sha256=${createHmac('sha256', v.secret).update(requests[0]!.rawBody).digest('hex')}`;
    for (const request of requests) expect(request.headers['x-service-signature']).toBe(signature);
    for (let i = 1; i < requests.length; i++) {
      expect(requests[i]!.at - requests[i - 1]!.at).toBeGreaterThanOrEqual(retryDelaysMs[i - 1]! - 20);
    }
    const [delivery] = await deliveries(v.subscriptionId);
    expect(delivery).toMatchObject({ status: 'failed', next_attempt_at: null, event_id: requests[0]!.json.event_id });
    expect(delivery!.attempts.map((a) => [a.trigger, a.status_code])).toEqual([
      ['scheduled', 500],
      ['scheduled', 500],
      ['scheduled', 500],
      ['scheduled', 500],
    ]);
  }, 60_000);

  it('fail then succeed stops at the succeeding attempt', async () => {
    receiver.answer('/second', { status: 503 });
    const v = await subscribedVehicle('/second');
    await impact(v.providerVehicleId);
    await expect.poll(() => requestsTo('/second').length, { timeout: 20_000 }).toBe(1);
    receiver.answer('/second', { status: 204 });
    await expect
      .poll(async () => (await deliveries(v.subscriptionId))[0]?.status, { timeout: 20_000 })
      .toBe('succeeded');
    await pause(retryDelaysMs[1]! + 1_000);
    expect(requestsTo('/second')).toHaveLength(2);
    expect((await deliveries(v.subscriptionId))[0]!.attempts.map((a) => a.status_code)).toEqual([503, 204]);
  }, 60_000);

  it('a retry owed survives a worker restart and a FLUSHDB: sent once, when due', async () => {
    receiver.answer('/flush', { status: 500 });
    const v = await subscribedVehicle('/flush');
    await impact(v.providerVehicleId);
    await expect.poll(() => requestsTo('/flush').length, { timeout: 20_000 }).toBe(1);
    // The retry's delayed job is in Redis; the worker goes away and Redis forgets everything.
    await webhooks.close();
    await redis.client.flushdb();
    receiver.answer('/flush', { status: 200 });
    await pause(retryDelaysMs[0]! + 200);
    expect(requestsTo('/flush')).toHaveLength(1);
    webhooks = await t.startWorkers(['webhooks']);
    await expect
      .poll(async () => (await deliveries(v.subscriptionId))[0]?.status, { timeout: 30_000 })
      .toBe('succeeded');
    await pause(1_000);
    expect(requestsTo('/flush')).toHaveLength(2);
    expect((await deliveries(v.subscriptionId))[0]!.attempts.map((a) => [a.trigger, a.status_code])).toEqual([
      ['scheduled', 500],
      ['scheduled', 200],
    ]);
  }, 90_000);

  it("a dead worker's send is recorded as worker_lost and counts as the attempt it was; the next follows the schedule", async () => {
    receiver.answer('/lost', { status: 200 });
    const v = await subscribedVehicle('/lost');
    const d = await insertDelivery(
      t,
      { id: v.subscriptionId, companyId: acme.id, vehicleId: v.vehicleId },
      {
        kind: 'hard_impact',
        status: 'pending',
        createdAt: new Date(Date.now() - 3_600_000),
      },
    );
    // As a worker leaves a send it had claimed when it was killed: sending for an hour.
    await t.pool.query(
      `UPDATE monitoring_deliveries SET next_attempt_at = now() - interval '1 hour', sending_since = now() - interval '1 hour' WHERE id = $1`,
      [d.id],
    );
    await t.queues.add('webhooks.monitoring-recover', {});
    await expect
      .poll(async () => (await deliveries(v.subscriptionId))[0]?.status, { timeout: 20_000 })
      .toBe('succeeded');
    const [delivery] = await deliveries(v.subscriptionId);
    expect(delivery!.attempts.map((a) => [a.trigger, a.status_code])).toEqual([
      ['worker_lost', null],
      ['scheduled', 200],
    ]);
    expect(delivery!.attempts[0]!.error).toMatch(/^worker_lost: /);
    const { rows } = await t.pool.query(`SELECT scheduled_attempts FROM monitoring_deliveries WHERE id = $1`, [d.id]);
    expect(rows[0].scheduled_attempts).toBe(2);
  }, 60_000);
  it('a retry owed when the subscription is deleted is settled failed (subscription_deleted) and never sent', async () => {
    receiver.answer('/deleted', { status: 500 });
    const v = await subscribedVehicle('/deleted');
    await impact(v.providerVehicleId);
    await expect.poll(() => requestsTo('/deleted').length, { timeout: 20_000 }).toBe(1);
    expect((await v1(t, 'DELETE', `/subscriptions/${v.subscriptionId}`, acme.key)).statusCode).toBe(200);
    await expect.poll(async () => (await deliveries(v.subscriptionId))[0]?.status, { timeout: 20_000 }).toBe('failed');
    const [delivery] = await deliveries(v.subscriptionId);
    expect(delivery!.next_attempt_at).toBeNull();
    expect(delivery!.attempts.at(-1)).toMatchObject({ status_code: null, trigger: 'scheduled' });
    expect(delivery!.attempts.at(-1)!.error).toMatch(/^subscription_deleted: /);
    await pause(retryDelaysMs[1]! + 500);
    expect(requestsTo('/deleted')).toHaveLength(1);
  }, 60_000);
});

describe('sharing the worker', () => {
  it("a company's lanes fill the process only up to its reserved quarter; another company's delivery goes out meanwhile", async () => {
    const busy = await t.createCompany('Busy Fleet');
    receiver.answer('/hang', { status: 200, delayMs: 1_500 });
    receiver.answer('/calm', { status: 200 });
    const due = new Date(Date.now() - 1_000);
    // One more subscription than the company may run while a quarter of the 64 slots stays free.
    const fill = deliverySlotsPerProcess - lanesPerCompany;
    for (let i = 0; i <= fill; i++) {
      const vehicle = await t.createVehicle(busy.id);
      const response = await v1(t, 'POST', '/runs/subscribe', busy.key, {
        vehicle_id: vehicle.id,
        webhook_url: `${receiver.url}/hang`,
        tier: 'premium',
        events: ['hard_impact'],
      });
      const subscription = { id: response.json().data.id, companyId: busy.id, vehicleId: vehicle.id };
      await insertDelivery(t, subscription, {
        kind: 'hard_impact',
        status: 'pending',
        createdAt: due,
        nextAttemptAt: due,
      });
    }
    const calm = await subscribedVehicle('/calm');
    await insertDelivery(
      t,
      { id: calm.subscriptionId, companyId: acme.id, vehicleId: calm.vehicleId },
      {
        kind: 'hard_impact',
        status: 'pending',
        createdAt: due,
        nextAttemptAt: due,
      },
    );
    await t.queues.add('webhooks.monitoring-recover', {});
    await expect.poll(() => requestsTo('/hang').length, { timeout: 30_000 }).toBe(fill + 1);
    const calmAt = requestsTo('/calm')[0]!.at;
    const hangs = requestsTo('/hang')
      .map((r) => r.at)
      .sort((a, b) => a - b);
    // The last lane waited for a slot: the other company's delivery did not.
    expect(calmAt).toBeLessThan(hangs[fill]!);
    const lanes = await t.queues.queue('webhooks').getCompleted(0, 1_000);
    expect(
      lanes.some(
        (job) => job.name === 'webhooks.monitoring-lane' && job.data.companyId === busy.id && job.returnvalue?.deferred,
      ),
    ).toBe(true);
  }, 60_000);
});

describe('manual retry and recover', () => {
  it('POST /v1/deliveries/:id/retry sends one more attempt now; a 2xx marks the delivery succeeded; other companies get 404', async () => {
    receiver.answer('/manual', { status: 500 });
    const v = await subscribedVehicle('/manual');
    await impact(v.providerVehicleId);
    await expect.poll(async () => (await deliveries(v.subscriptionId))[0]?.status, { timeout: 30_000 }).toBe('failed');
    const [failed] = await deliveries(v.subscriptionId);

    expect((await v1(t, 'POST', `/deliveries/${failed!.id}/retry`, rival.key)).statusCode).toBe(404);
    expect((await v1(t, 'POST', `/deliveries/not-an-id/retry`, acme.key)).statusCode).toBe(404);
    expect((await v1(t, 'POST', `/deliveries/00000000-0000-4000-8000-000000000000/retry`, acme.key)).statusCode).toBe(
      404,
    );
    expect(requestsTo('/manual')).toHaveLength(4);

    receiver.answer('/manual', { status: 200 });
    const retry = await v1(t, 'POST', `/deliveries/${failed!.id}/retry`, acme.key);
    expect(retry.statusCode, retry.body).toBe(202);
    expect(retry.json().data).toEqual({ delivery_id: failed!.id, queued: true });
    await expect
      .poll(async () => (await deliveries(v.subscriptionId))[0]?.status, { timeout: 20_000 })
      .toBe('succeeded');
    const [succeeded] = await deliveries(v.subscriptionId);
    expect(succeeded!.attempts.map((a) => [a.trigger, a.status_code])).toEqual([
      ['scheduled', 500],
      ['scheduled', 500],
      ['scheduled', 500],
      ['scheduled', 500],
      ['manual', 200],
    ]);
    const requests = requestsTo('/manual');
    expect(requests).toHaveLength(5);
    expect(requests[4]!.rawBody.equals(requests[0]!.rawBody)).toBe(true);
  }, 60_000);

  it('POST /v1/subscriptions/:id/recover resends the failed deliveries since a time and says how many; other companies get 404', async () => {
    receiver.answer('/recover', { status: 500 });
    const v = await subscribedVehicle('/recover');
    await impact(v.providerVehicleId);
    await impact(v.providerVehicleId);
    await expect
      .poll(async () => (await deliveries(v.subscriptionId)).map((d) => d.status), { timeout: 30_000 })
      .toEqual(['failed', 'failed']);
    const since = new Date(Date.now() - 3_600_000).toISOString();

    expect((await v1(t, 'POST', `/subscriptions/${v.subscriptionId}/recover`, rival.key, { since })).statusCode).toBe(
      404,
    );
    expect(
      (await v1(t, 'POST', `/subscriptions/${v.subscriptionId}/recover`, acme.key, { since: 'yesterday' })).statusCode,
    ).toBe(400);
    // Nothing failed after now.
    const none = await v1(t, 'POST', `/subscriptions/${v.subscriptionId}/recover`, acme.key, {
      since: new Date(Date.now() + 60_000).toISOString(),
    });
    expect(none.statusCode).toBe(202);
    expect(none.json().data.queued).toBe(0);

    receiver.answer('/recover', { status: 200 });
    const recover = await v1(t, 'POST', `/subscriptions/${v.subscriptionId}/recover`, acme.key, { since });
    expect(recover.statusCode, recover.body).toBe(202);
    expect(recover.json().data).toEqual({ subscription_id: v.subscriptionId, since, queued: 2 });
    await expect
      .poll(async () => (await deliveries(v.subscriptionId)).map((d) => d.status), { timeout: 20_000 })
      .toEqual(['succeeded', 'succeeded']);
    for (const delivery of await deliveries(v.subscriptionId)) {
      expect(delivery.attempts.at(-1)).toMatchObject({ trigger: 'recover', status_code: 200 });
      expect(delivery.attempts).toHaveLength(5);
    }
    // Nothing failed is left to recover.
    const again = await v1(t, 'POST', `/subscriptions/${v.subscriptionId}/recover`, acme.key, { since });
    expect(again.json().data.queued).toBe(0);
  }, 90_000);
});

describe('retention and metering', () => {
  it('the purge job deletes events and deliveries past 30/90/365 days by tier, and keeps the rest', async () => {
    const vehicle = await t.createVehicle(acme.id);
    const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000);
    const kept: string[] = [];
    const purged: string[] = [];
    for (const tier of ['basic', 'standard', 'premium'] as const) {
      const response = await v1(t, 'POST', '/runs/subscribe', acme.key, {
        vehicle_id: vehicle.id,
        webhook_url: `${receiver.url}/retention`,
        tier,
        events: ['oil_change_needed'],
      });
      const subscription = { id: response.json().data.id, companyId: acme.id, vehicleId: vehicle.id };
      const keep = { basic: 29, standard: 89, premium: 364 }[tier];
      const drop = { basic: 31, standard: 91, premium: 366 }[tier];
      for (const [days, list] of [
        [keep, kept],
        [drop, purged],
      ] as const) {
        const d = await insertDelivery(t, subscription, {
          kind: 'oil_change_needed',
          status: 'failed',
          createdAt: daysAgo(days),
          attempts: [{ at: daysAgo(days), statusCode: 500 }],
        });
        list.push(d.eventId);
      }
    }
    const job = await t.queues.add('maintenance.purge-monitoring', {});
    await expect
      .poll(async () => (await t.queues.queue('maintenance').getJob(job.id!))?.finishedOn ?? null, { timeout: 20_000 })
      .not.toBeNull();
    const { rows } = await t.pool.query<{ id: string }>(
      `SELECT e.id FROM monitoring_events e WHERE e.id = ANY ($1::uuid[])`,
      [[...kept, ...purged]],
    );
    expect(rows.map((r) => r.id).sort()).toEqual([...kept].sort());
    const orphans = await t.pool.query(
      `SELECT (SELECT count(*)::int FROM monitoring_deliveries WHERE event_id = ANY ($1::uuid[])) AS deliveries,
              (SELECT count(*)::int FROM monitoring_attempts a JOIN monitoring_deliveries d ON d.id = a.delivery_id
               WHERE d.event_id = ANY ($1::uuid[])) AS attempts`,
      [purged],
    );
    expect(orphans.rows[0]).toEqual({ deliveries: 0, attempts: 0 });
  }, 60_000);

  it('monitoredVehiclesOfMonth answers each vehicle monitored in the month at its highest tier then', async () => {
    const meter = await t.createCompany('Metered Fleet');
    const [a, b, c] = await Promise.all([1, 2, 3].map(() => t.createVehicle(meter.id)));
    const other = await t.createVehicle(rival.id);
    const subscription = async (
      key: string,
      vehicleId: string,
      tier: string,
      createdAt: string,
      deletedAt: string | null,
    ) => {
      const response = await v1(t, 'POST', '/runs/subscribe', key, {
        vehicle_id: vehicleId,
        webhook_url: `${receiver.url}/meter`,
        tier,
        events: ['oil_change_needed'],
      });
      expect(response.statusCode, response.body).toBe(201);
      await t.pool.query(`UPDATE monitoring_subscriptions SET created_at = $2, deleted_at = $3 WHERE id = $1`, [
        response.json().data.id,
        createdAt,
        deletedAt,
      ]);
    };
    await subscription(meter.key, a!.id, 'basic', '2026-10-05T00:00:00Z', '2026-10-20T00:00:00Z');
    await subscription(meter.key, a!.id, 'premium', '2026-10-31T23:59:59Z', null);
    await subscription(meter.key, b!.id, 'standard', '2026-09-01T00:00:00Z', '2026-10-01T00:00:01Z');
    await subscription(meter.key, b!.id, 'basic', '2026-08-01T00:00:00Z', null);
    await subscription(meter.key, c!.id, 'premium', '2026-09-01T00:00:00Z', '2026-09-30T23:59:59Z');
    await subscription(rival.key, other!.id, 'premium', '2026-10-01T00:00:00Z', null);

    const byVehicle = async (month: string) =>
      Object.fromEntries((await monitoredVehiclesOfMonth(t.pool, meter.id, month)).map((m) => [m.vehicleId, m.tier]));
    expect(await byVehicle('2026-09')).toEqual({ [b!.id]: 'standard', [c!.id]: 'premium' });
    expect(await byVehicle('2026-10')).toEqual({ [a!.id]: 'premium', [b!.id]: 'standard' });
    expect(await byVehicle('2026-11')).toEqual({ [a!.id]: 'premium', [b!.id]: 'basic' });
    expect(await byVehicle('2026-07')).toEqual({});
    await expect(monitoredVehiclesOfMonth(t.pool, meter.id, '2026-13')).rejects.toThrow(/YYYY-MM/);
  });
});
