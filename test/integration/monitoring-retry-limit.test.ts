/**
 * Manual retry limits of a monitoring delivery (issue 16), with a real webhooks worker and a
 * receiver on 127.0.0.1: one manual retry per delivery per rolling hour here (429 RATE_LIMITED with
 * Retry-After from the oldest), three in all (then 409 LIMIT_REACHED); a refused retry sends
 * nothing; concurrent retries at the limit let exactly one through; recover counts against the
 * same limits; the console's Retry button shows the refusal as an alert.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { newConsoleUser } from '../helpers/console.js';
import { insertDelivery, v1 } from '../helpers/monitoring.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

let t: TestApp;
let receiver: Receiver;
let acme: { id: string; key: string };
let rival: { id: string; key: string };
let acmeVehicle: string;
/** The service's clock: moved forward by the tests, across the limit's hour. */
let clock = new Date();
const hourMs = 3_600_000;
const password = 'a long enough password';

beforeAll(async () => {
  t = await createTestApp(
    {
      WEBHOOK_ALLOW_NETS: '127.0.0.1/32',
      MONITORING_MANUAL_RETRIES_PER_HOUR: '1',
      MONITORING_MANUAL_RETRIES_PER_DELIVERY: '3',
    },
    () => clock,
  );
  receiver = await startReceiver();
  acme = await t.createCompany('Acme Fleet');
  rival = await t.createCompany('Rival Fleet');
  acmeVehicle = (await t.createVehicle(acme.id)).id;
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

/** A subscription to `path` on the receiver (which answers 500 there) and a failed delivery of it. */
async function failedDelivery(path: string) {
  receiver.answer(path, { status: 500 });
  const response = await v1(t, 'POST', '/runs/subscribe', acme.key, {
    vehicle_id: acmeVehicle,
    webhook_url: `${receiver.url}${path}`,
    tier: 'premium',
    events: ['hard_impact'],
  });
  expect(response.statusCode, response.body).toBe(201);
  const subscription = { id: response.json().data.id as string, companyId: acme.id, vehicleId: acmeVehicle };
  const createdAt = new Date(clock.getTime() - 30 * 60_000);
  const delivery = await insertDelivery(t, subscription, {
    kind: 'hard_impact',
    status: 'failed',
    createdAt,
    attempts: [0, 1, 6, 21].map((m) => ({ at: new Date(createdAt.getTime() + m * 60_000), statusCode: 500 })),
  });
  return { subscriptionId: subscription.id, deliveryId: delivery.id };
}

let workers: Promise<unknown> | undefined;
/** The webhooks worker, started once, by the first test that needs attempts sent. */
const sending = () => (workers ??= t.startWorkers(['webhooks']));

const retry = (deliveryId: string, key = acme.key) => v1(t, 'POST', `/deliveries/${deliveryId}/retry`, key);
const requestsTo = (path: string) => receiver.received.filter((r) => r.path === path).length;

async function attemptCount(subscriptionId: string, deliveryId: string): Promise<number> {
  const response = await v1(t, 'GET', `/subscriptions/${subscriptionId}/deliveries`, acme.key);
  return response.json().data.find((d: { id: string }) => d.id === deliveryId).attempt_count;
}

async function manualRetries(deliveryId: string) {
  const result = await t.pool.query(`SELECT manual_retries, next_attempt_at FROM monitoring_deliveries WHERE id = $1`, [
    deliveryId,
  ]);
  return result.rows[0] as { manual_retries: number; next_attempt_at: Date | null };
}

describe('concurrent retries', () => {
  // First, before any worker runs: what is queued stays queued, so every answer is decided by the limit.
  it('ten retries of one delivery at once, at a limit of one an hour: one is queued, nine get 429; one POST goes out', async () => {
    const { subscriptionId, deliveryId } = await failedDelivery('/burst');
    const answers = await Promise.all(Array.from({ length: 10 }, () => retry(deliveryId)));
    const statuses = answers.map((a) => a.statusCode).sort();
    expect(statuses).toEqual([202, ...Array(9).fill(429)]);
    for (const refused of answers.filter((a) => a.statusCode === 429)) {
      expect(refused.json().error.code).toBe('RATE_LIMITED');
      expect(Number(refused.headers['retry-after'])).toBe(3600);
    }
    expect(await manualRetries(deliveryId)).toMatchObject({ manual_retries: 1 });

    await sending();
    await expect.poll(() => attemptCount(subscriptionId, deliveryId), { timeout: 20_000 }).toBe(5);
    expect(requestsTo('/burst')).toBe(1);
  }, 60_000);
});

describe('limits of one delivery', () => {
  it('429 with Retry-After until the oldest retry of the hour is an hour old, then 409 once three are used', async () => {
    await sending();
    const { subscriptionId, deliveryId } = await failedDelivery('/limits');
    const start = clock.getTime();
    const at = (ms: number) => (clock = new Date(start + ms));

    expect((await retry(deliveryId, rival.key)).statusCode).toBe(404);
    const first = await retry(deliveryId);
    expect(first.statusCode, first.body).toBe(202);
    expect(first.json().data).toEqual({ delivery_id: deliveryId, queued: true });
    await expect.poll(() => attemptCount(subscriptionId, deliveryId), { timeout: 20_000 }).toBe(5);

    at(10 * 60_000);
    const early = await retry(deliveryId);
    expect(early.statusCode).toBe(429);
    expect(early.headers['retry-after']).toBe(String(50 * 60));
    expect(early.json()).toMatchObject({
      success: false,
      error: {
        code: 'RATE_LIMITED',
        message: 'manual retries of this delivery are limited to 1 per hour; retry after 3000 seconds',
      },
    });
    // Refused: nothing owed, nothing counted, nothing sent.
    expect(await manualRetries(deliveryId)).toEqual({ manual_retries: 1, next_attempt_at: null });

    at(hourMs - 1000);
    expect((await retry(deliveryId)).headers['retry-after']).toBe('1');
    at(hourMs);
    expect((await retry(deliveryId)).statusCode).toBe(202);
    await expect.poll(() => attemptCount(subscriptionId, deliveryId), { timeout: 20_000 }).toBe(6);
    at(2 * hourMs + 5000);
    expect((await retry(deliveryId)).statusCode).toBe(202);
    await expect.poll(() => attemptCount(subscriptionId, deliveryId), { timeout: 20_000 }).toBe(7);

    at(10 * hourMs);
    const exhausted = await retry(deliveryId);
    expect(exhausted.statusCode).toBe(409);
    expect(exhausted.headers['retry-after']).toBeUndefined();
    expect(exhausted.json().error).toEqual({
      code: 'LIMIT_REACHED',
      message: 'manual retries of this delivery are limited to 3 in all, and it has had them',
      details: { resource: 'manual_retries', limit: 3 },
    });
    expect(await manualRetries(deliveryId)).toEqual({ manual_retries: 3, next_attempt_at: null });
    expect(requestsTo('/limits')).toBe(3);
  }, 60_000);

  it('recover counts as a manual retry of each delivery it queues, and skips one without a retry left', async () => {
    await sending();
    const a = await failedDelivery('/recover-a');
    const b = await insertDelivery(
      t,
      { id: a.subscriptionId, companyId: acme.id, vehicleId: acmeVehicle },
      {
        kind: 'hard_impact',
        status: 'failed',
        createdAt: new Date(clock.getTime() - 25 * 60_000),
        attempts: [0, 1, 6, 21].map((m) => ({ at: new Date(clock.getTime() - (25 - m) * 60_000), statusCode: 500 })),
      },
    );
    expect((await retry(a.deliveryId)).statusCode).toBe(202);
    await expect.poll(() => attemptCount(a.subscriptionId, a.deliveryId), { timeout: 20_000 }).toBe(5);

    const since = new Date(clock.getTime() - 24 * hourMs).toISOString();
    const recover = await v1(t, 'POST', `/subscriptions/${a.subscriptionId}/recover`, acme.key, { since });
    expect(recover.statusCode, recover.body).toBe(202);
    // a has had its retry of the hour; only b is queued.
    expect(recover.json().data.queued).toBe(1);
    expect(await manualRetries(a.deliveryId)).toMatchObject({ manual_retries: 1 });
    expect(await manualRetries(b.id)).toMatchObject({ manual_retries: 1 });
    await expect.poll(() => attemptCount(a.subscriptionId, b.id), { timeout: 20_000 }).toBe(5);
    expect((await retry(b.id)).statusCode).toBe(429);
  }, 60_000);
});

describe('console', () => {
  it('Retry past the limit answers 303 to the refusal, an alert shown once; a reload retries nothing', async () => {
    await sending();
    const { subscriptionId, deliveryId } = await failedDelivery('/console');
    const user = await newConsoleUser(t, acme.id, 'ops@acme.test', password);
    const page = await user.get('/console/monitoring');
    expect(page.body).toContain(`/console/monitoring/deliveries/${deliveryId}/retry`);
    const clickRetry = () => user.post(`/console/monitoring/deliveries/${deliveryId}/retry`);

    expect((await clickRetry()).statusCode).toBe(303);
    await expect.poll(() => attemptCount(subscriptionId, deliveryId), { timeout: 20_000 }).toBe(5);
    const refused = await clickRetry();
    expect(refused.statusCode).toBe(303);
    const location = String(refused.headers.location);
    expect(location).toMatch(/^\/console\/monitoring\?refused=[0-9a-f-]{36}$/);
    const shown = await user.get(location);
    expect(shown.statusCode).toBe(200);
    expect(shown.headers['content-type']).toMatch(/^text\/html/);
    expect(shown.body).toContain(
      '<div class="alert" role="alert">Not retried: manual retries of this delivery are limited to 1 per hour; retry after 3600 seconds.</div>',
    );
    // The reload a person does is a GET: it retries nothing, and the alert is not shown twice.
    const reloaded = await user.get(location);
    expect(reloaded.statusCode).toBe(200);
    expect(reloaded.body).not.toContain('role="alert"');
    expect(await manualRetries(deliveryId)).toMatchObject({ manual_retries: 1 });
    expect(await attemptCount(subscriptionId, deliveryId)).toBe(5);

    // From the subscription's own page (its form says which, and the filter), the refusal answers there.
    const fromPage = await user.post(`/console/monitoring/deliveries/${deliveryId}/retry`, {
      subscription: subscriptionId,
      status: 'failed',
    });
    const back = String(fromPage.headers.location);
    expect(back).toMatch(new RegExp(`^/console/monitoring/${subscriptionId}\\?status=failed&refused=[0-9a-f-]{36}$`));
    expect((await user.get(back)).body).toContain('<div class="alert" role="alert">Not retried: manual retries');
    expect(await manualRetries(deliveryId)).toMatchObject({ manual_retries: 1 });
  }, 60_000);
});
