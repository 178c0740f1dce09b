import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyServiceSignature } from '../../packages/sdk/src/signatures.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

let t: TestApp;
let receiver: Receiver;
let acme: { id: string; key: string };

beforeAll(async () => {
  t = await createTestApp({ WEBHOOK_ALLOW_NETS: '127.0.0.1/32', WEBHOOK_TIMEOUT_MS: '500' });
  receiver = await startReceiver();
  acme = await t.createCompany('Acme Fleet');
  await t.admin('PATCH', `/companies/${acme.id}`, { external_ids: { shopmonkey: 'cus_42' } });
  await t.startWorkers(['webhooks', 'runs']);
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

async function subscribe(path: string, events: string[], key = acme.key) {
  const response = await t.api('POST', '/webhook-subscriptions', key, { url: `${receiver.url}${path}`, events });
  expect(response.statusCode).toBe(201);
  return response.json().data as { id: string; signing_secret: string; url: string };
}

const allKinds = [
  'run.created',
  'run.appointment_updated',
  'run.appointment_confirmed',
  'run.appointment_cancelled',
  'run.completed',
  'run.dispatch_proposed',
];

async function receivedAt(path: string, count: number, timeout = 10_000) {
  await expect
    .poll(() => receiver.received.filter((r) => r.path === path).length, { timeout })
    .toBeGreaterThanOrEqual(count);
  // Nothing more arrives shortly after (each event once per subscription).
  await new Promise((resolve) => setTimeout(resolve, 300));
  return receiver.received.filter((r) => r.path === path);
}

async function newRun(extra: Record<string, unknown> = {}) {
  const vehicle = await t.createVehicle(acme.id, {
    home_location: {
      name: 'North yard',
      street_1: '9 Depot Rd',
      city: 'Joliet',
      state: 'IL',
      postal_code: '60431',
      country: 'US',
      latitude: 41.52,
      longitude: -88.08,
    },
  });
  const response = await t.admin('POST', `/companies/${acme.id}/service-requests`, {
    vehicle_id: vehicle.id,
    title: 'Brakes squeal',
    items: [{ title: 'Brake inspection', type: 'brake_inspection' }],
    customer: {
      name: 'Ana Maria Lopez',
      email: 'ana@example.com',
      phone: '+1 555 0100',
      display_address: '1 Main St, Springfield, IL 62701',
    },
    ...extra,
  });
  expect(response.statusCode).toBe(201);
  return { vehicleId: vehicle.id as string, runId: response.json().data.run.id as string };
}

describe('subscriptions', () => {
  it('returns the signing secret once, keeps it encrypted, and validates URL and kinds', async () => {
    const created = await subscribe('/once', ['run.created']);
    expect(created.signing_secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const fetched = (await t.api('GET', `/webhook-subscriptions/${created.id}`, acme.key)).json().data;
    expect(fetched).toEqual({
      id: created.id,
      url: `${receiver.url}/once`,
      events: ['run.created'],
      created_at: expect.any(String),
    });
    expect(JSON.stringify((await t.api('GET', '/webhook-subscriptions', acme.key)).json())).not.toContain(
      created.signing_secret,
    );
    const { rows } = await t.pool.query(`SELECT secret_ciphertext FROM webhook_subscriptions WHERE id = $1`, [
      created.id,
    ]);
    expect(rows[0].secret_ciphertext.includes(Buffer.from(created.signing_secret))).toBe(false);

    const bad: Array<[unknown, string]> = [
      [{ url: `${receiver.url}/x`, events: ['run.exploded'] }, 'events.0'],
      [{ url: `${receiver.url}/x`, events: [] }, 'events'],
      [{ url: 'http://hooks.example.com/x', events: ['run.created'] }, 'url'],
      [{ url: 'https://10.0.0.5/x', events: ['run.created'] }, 'url'],
      [{ url: 'https://169.254.169.254/latest', events: ['run.created'] }, 'url'],
      [{ url: 'https://user:pass@hooks.example.com/x', events: ['run.created'] }, 'url'],
      [{ url: 'https://localhost/x', events: ['run.created'] }, 'url'],
      [{ url: 'not a url', events: ['run.created'] }, 'url'],
    ];
    for (const [body, field] of bad) {
      const response = await t.api('POST', '/webhook-subscriptions', acme.key, body);
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      expect(response.json().error.details.errors.map((e: { field: string }) => e.field)).toContain(field);
    }
  });

  it("another company's subscription is 404 and never listed; delete stops deliveries", async () => {
    const other = await t.createCompany('Other');
    const foreign = await subscribe('/foreign', ['run.created'], other.key);
    expect((await t.api('GET', `/webhook-subscriptions/${foreign.id}`, acme.key)).statusCode).toBe(404);
    expect((await t.api('DELETE', `/webhook-subscriptions/${foreign.id}`, acme.key)).statusCode).toBe(404);
    expect((await t.api('GET', `/webhook-subscriptions/${foreign.id}/deliveries`, acme.key)).statusCode).toBe(404);
    expect(
      (await t.api('GET', '/webhook-subscriptions', acme.key)).json().data.map((s: { id: string }) => s.id),
    ).not.toContain(foreign.id);
    const gone = await subscribe('/deleted', ['run.created']);
    expect((await t.api('DELETE', `/webhook-subscriptions/${gone.id}`, acme.key)).statusCode).toBe(200);
    await newRun();
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(receiver.received.filter((r) => r.path === '/deleted')).toEqual([]);
  });
});

describe('run events', () => {
  it('delivers every kind with its trigger, signed over the exact bytes, in the WebhookRun shape', async () => {
    const all = await subscribe('/all', allKinds);
    await t.admin('POST', `/companies/${acme.id}/roster`, {
      type: 'shop',
      name: 'Joliet Brakes',
      skills: ['brake_inspection'],
      latitude: 41.53,
      longitude: -88.09,
    });
    const { runId } = await newRun();
    const created = await receivedAt('/all', 2);
    expect(created.map((r) => r.json.event).sort()).toEqual(['run.created', 'run.dispatch_proposed']);

    await t.admin('POST', `/runs/${runId}/propose`, { start: '2026-12-05T09:00:00Z', end: '2026-12-05T11:00:00Z' });
    await t.admin('POST', `/runs/${runId}/confirm`);
    await t.admin('POST', `/runs/${runId}/complete`);
    await t.admin('POST', `/runs/${runId}/reopen`);
    await t.admin('POST', `/runs/${runId}/complete`);
    const { runId: cancelledRun } = await newRun();
    await t.admin('POST', `/runs/${cancelledRun}/cancel`);
    // 6 events of the first run, 3 of the second (created, dispatch proposal, cancelled).
    const deliveries = await receivedAt('/all', 9);
    expect(deliveries).toHaveLength(9);
    // Deliveries run in parallel, so arrival order is not event order: sort by the event's time.
    const byTime = [...deliveries].sort((a, b) => a.json.timestamp.localeCompare(b.json.timestamp));
    const forRun = byTime.filter((r) => r.json.data.id === runId).map((r) => r.json.event);
    expect(forRun).toEqual([
      'run.created',
      'run.dispatch_proposed',
      'run.appointment_updated',
      'run.appointment_confirmed',
      'run.completed',
      'run.completed',
    ]);
    expect(deliveries.filter((r) => r.json.data.id === cancelledRun).map((r) => r.json.event)).toContain(
      'run.appointment_cancelled',
    );

    for (const delivery of deliveries) {
      const header = delivery.headers['service-signature'] as string;
      expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
      expect(verifyServiceSignature(header, delivery.rawBody, all.signing_secret)).toMatchObject({ ok: true });
      expect(verifyServiceSignature(header, delivery.rawBody, 'whsec_wrong')).toMatchObject({
        ok: false,
        reason: 'mismatch',
      });
    }
    const completions = deliveries.filter((r) => r.json.event === 'run.completed' && r.json.data.id === runId);
    expect(new Set(completions.map((r) => r.json.event_id)).size).toBe(2);

    const envelope = deliveries.find((r) => r.json.event === 'run.appointment_confirmed')!.json;
    expect(envelope).toMatchObject({
      api_version: '2026-11-01',
      event_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      timestamp: expect.any(String),
    });
    const publicRun = (await t.api('GET', `/runs/${runId}`, acme.key)).json().data;
    for (const field of [
      'id',
      'title',
      'description',
      'status',
      'scheduling_state',
      'scheduling_status',
      'reference_code',
      'created_at',
      'appointment_time',
      'customer_requested_time',
      'vehicle',
      'items',
    ]) {
      expect(envelope.data, field).toHaveProperty(field);
    }
    expect(envelope.data).toMatchObject({
      id: runId,
      scheduling_state: 'confirmed',
      scheduling_status: 'confirmed',
      reference_code: publicRun.reference_code,
      appointment: { start: '2026-12-05T09:00:00.000Z', end: '2026-12-05T11:00:00.000Z', external_id: runId },
      owner_company: { id: acme.id, name: 'Acme Fleet', external_ids: { shopmonkey: 'cus_42' } },
      customer: {
        name: 'Ana Maria Lopez',
        first_name: 'Ana',
        last_name: 'Maria Lopez',
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      },
      service_location: {
        source: 'vehicle_home',
        name: 'North yard',
        street_1: '9 Depot Rd',
        city: 'Joliet',
        state: 'IL',
        postal_code: '60431',
        country: 'US',
        display_address: '9 Depot Rd, Joliet, IL 60431',
      },
      dispatch_proposal: { assignee: { type: 'shop', name: 'Joliet Brakes' } },
    });
    expect(envelope.data.items).toEqual([
      { title: 'Brake inspection', description: null, status: 'pending', type: 'brake_inspection' },
    ]);
  });

  it('a folded request emits no run.created; subscriptions get only their kinds', async () => {
    await subscribe('/completed-only', ['run.completed']);
    await subscribe('/created', ['run.created']);
    const { vehicleId, runId } = await newRun();
    const folded = await t.admin('POST', `/companies/${acme.id}/service-requests`, {
      vehicle_id: vehicleId,
      items: [{ title: 'Oil change', type: 'oil_change' }],
    });
    expect(folded.statusCode, folded.body).toBe(200);
    expect(folded.json().data.folded).toBe(true);
    await t.admin('POST', `/runs/${runId}/complete`);
    const completed = await receivedAt('/completed-only', 1);
    expect(completed.map((r) => r.json.event)).toEqual(['run.completed']);
    const created = await receivedAt('/created', 1);
    // One run.created, for the run itself: the folded request sent none.
    expect(created.map((r) => [r.json.event, r.json.data.id])).toEqual([['run.created', runId]]);
  });

  it('Send test delivers webhook.test, a synthetic run of the same shape, to that subscription only', async () => {
    const tested = await subscribe('/tested', ['run.completed']);
    const response = await t.api('POST', `/webhook-subscriptions/${tested.id}/test`, acme.key);
    expect(response.statusCode).toBe(202);
    const [delivery] = await receivedAt('/tested', 1);
    expect(delivery!.json).toMatchObject({
      event: 'webhook.test',
      event_id: response.json().data.event_id,
      data: { reference_code: 'R-TEST0000', owner_company: { id: acme.id } },
    });
    expect(Object.keys(delivery!.json.data)).toEqual(
      expect.arrayContaining(['service_location', 'customer', 'appointment', 'items']),
    );
    expect(
      verifyServiceSignature(delivery!.headers['service-signature'] as string, delivery!.rawBody, tested.signing_secret)
        .ok,
    ).toBe(true);
  });
});

describe('one attempt, whatever happens', () => {
  async function attemptsOf(subscriptionId: string) {
    await expect
      .poll(
        async () =>
          (await t.api('GET', `/webhook-subscriptions/${subscriptionId}/deliveries`, acme.key)).json().data[0]?.status,
        { timeout: 10_000 },
      )
      .toMatch(/^(succeeded|failed)$/);
    return (await t.api('GET', `/webhook-subscriptions/${subscriptionId}/deliveries`, acme.key)).json().data;
  }

  it('500, timeout, redirect and refused connections each give exactly one failed attempt, recorded', async () => {
    receiver.answer('/fails', { status: 500, body: 'upstream exploded' });
    receiver.answer('/slow', { delayMs: 2000 });
    receiver.answer('/moved', { status: 302, headers: { location: '/elsewhere' } });
    const failing = await subscribe('/fails', ['run.created']);
    const slow = await subscribe('/slow', ['run.created']);
    const moved = await subscribe('/moved', ['run.created']);
    const refused = await t.api('POST', '/webhook-subscriptions', acme.key, {
      url: 'http://127.0.0.1:9/closed',
      events: ['run.created'],
    });
    const refusedId = refused.json().data.id;
    for (const s of [failing.id, slow.id, moved.id, refusedId])
      await t.api('POST', `/webhook-subscriptions/${s}/test`, acme.key);

    const [fail] = await attemptsOf(failing.id);
    expect(fail).toMatchObject({
      event: 'webhook.test',
      status: 'failed',
      attempts: [
        { attempt_number: 1, response_status: 500, error_code: 'http_status', response_excerpt: 'upstream exploded' },
      ],
    });
    const [timeout] = await attemptsOf(slow.id);
    expect(timeout.attempts).toHaveLength(1);
    expect(timeout.attempts[0]).toMatchObject({ error_code: 'timeout', response_status: null });
    expect(timeout.attempts[0].duration_ms).toBeGreaterThanOrEqual(450);
    const [redirect] = await attemptsOf(moved.id);
    expect(redirect.attempts[0]).toMatchObject({ error_code: 'redirect', response_status: 302 });
    const [closed] = await attemptsOf(refusedId);
    expect(closed.attempts[0]).toMatchObject({ error_code: 'connection_refused' });

    // Nothing is retried: after waiting, still one request per subscription and the redirect target untouched.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    for (const path of ['/fails', '/slow', '/moved'])
      expect(receiver.received.filter((r) => r.path === path)).toHaveLength(1);
    expect(receiver.received.filter((r) => r.path === '/elsewhere')).toEqual([]);
    const { rows } = await t.pool.query(
      `SELECT count(*)::int AS n FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.subscription_id = ANY($1)`,
      [[failing.id, slow.id, moved.id, refusedId]],
    );
    expect(rows[0].n).toBe(4);
  });
});
