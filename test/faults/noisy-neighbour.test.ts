/**
 * The noisy neighbour (issue 8, Done when): tenant A has 50 subscriptions to a receiver that
 * accepts connections and never answers, with many events each; tenant B has one subscription to
 * a healthy receiver. B's deliveries arrive within 5 s of their events, measured from the event's
 * creation to its arrival. The worker runs with the production WEBHOOK_TIMEOUT_MS (10 s): the
 * fairness does not come from a short deadline.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertWebhookEvents } from '../../src/db/webhooks.js';
import { lanesPerCompany } from '../../src/delivery/lane-slots.js';
import { requestRelay } from '../../src/queue/enqueue-webhooks.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

const noisySubscriptions = 50;
const eventsPerNoisySubscription = 150;
const quietEvents = 6;
const boundMs = 5_000;

let t: TestApp;
let healthy: Receiver;
let blackHole: Server;
let blackHolePort: number;
const held = new Set<Socket>();
/** Paths of the requests the black hole has swallowed. */
const swallowed: string[] = [];

beforeAll(async () => {
  t = await createTestApp({ WEBHOOK_ALLOW_NETS: '127.0.0.1/32' });
  expect(t.config.webhookTimeoutMs).toBe(10_000);
  healthy = await startReceiver();
  blackHole = createServer((socket) => {
    held.add(socket);
    socket.once('data', (chunk: Buffer) => swallowed.push(chunk.toString('latin1').split(' ')[1] ?? ''));
    socket.on('error', () => undefined);
    socket.on('close', () => held.delete(socket));
  });
  await new Promise<void>((resolve) => blackHole.listen(0, '127.0.0.1', resolve));
  blackHolePort = (blackHole.address() as { port: number }).port;
});
afterAll(async () => {
  // Cut the held connections so A's turns end now rather than at the deadline.
  blackHole.close();
  for (const socket of held) socket.destroy();
  await healthy.close();
  await t.close();
});

async function subscribe(key: string, url: string): Promise<string> {
  const response = await t.api('POST', '/webhook-subscriptions', key, { url, events: ['run.created'] });
  expect(response.statusCode).toBe(201);
  return response.json().data.id;
}

describe('one tenant with 50 subscriptions to a receiver that never answers', () => {
  it("does not hold back another tenant's deliveries: each arrives within 5 s of its event", async () => {
    const noisy = await t.createCompany('Noisy Fleet');
    const quiet = await t.createCompany('Quiet Fleet');
    for (let i = 0; i < noisySubscriptions; i++) await subscribe(noisy.key, `http://127.0.0.1:${blackHolePort}/a/${i}`);
    await subscribe(quiet.key, `${healthy.url}/b`);

    // A's backlog: every event goes to all 50 subscriptions.
    await insertWebhookEvents(
      t.pool,
      Array.from({ length: eventsPerNoisySubscription }, (_, i) => ({
        companyId: noisy.id,
        runId: null,
        kind: 'run.created',
        payload: { id: randomUUID(), title: `noisy run ${i}` },
        subscriptionId: null,
      })),
    );
    await t.startWorkers(['webhooks']);
    await requestRelay(t.queues);
    // A's lanes are in flight and stuck: as many as its share of the worker's slots.
    await expect
      .poll(() => new Set(swallowed.map((path) => path.split('/')[2])).size, { timeout: 15_000, interval: 100 })
      .toBeGreaterThanOrEqual(lanesPerCompany);

    // B's runs (one per vehicle: a second request would fold into the open run), created through
    // the operator API while A's lanes hang.
    const vehicles = [];
    for (let i = 0; i < quietEvents; i++) vehicles.push(await t.createVehicle(quiet.id));
    for (const [i, vehicle] of vehicles.entries()) {
      const created = await t.admin('POST', `/companies/${quiet.id}/service-requests`, {
        vehicle_id: vehicle.id,
        items: [{ title: `Check ${i}`, type: 'oil_change' }],
      });
      expect(created.statusCode).toBe(201);
      await new Promise((resolve) => setTimeout(resolve, 400));
    }
    const arrivals = () => healthy.received.filter((r) => r.path === '/b');
    await expect.poll(() => arrivals().length, { timeout: 20_000, interval: 100 }).toBe(quietEvents);

    const { rows } = await t.pool.query<{ id: string; occurredAt: Date }>(
      `SELECT id, occurred_at AS "occurredAt" FROM webhook_events WHERE company_id = $1 AND kind = 'run.created'`,
      [quiet.id],
    );
    expect(rows).toHaveLength(quietEvents);
    const createdAt = new Map(rows.map((r) => [r.id, r.occurredAt.getTime()]));
    const delaysMs = arrivals().map((r) => r.at - createdAt.get(r.json.event_id)!);
    expect(delaysMs).toHaveLength(quietEvents);
    for (const delay of delaysMs) expect(delay).toBeLessThan(boundMs);

    // A's receivers still hold its requests, unanswered.
    expect(held.size).toBeGreaterThanOrEqual(lanesPerCompany);
    console.log(`quiet tenant's event-to-arrival delays: ${delaysMs.join(', ')} ms`);
  }, 60_000);
});
