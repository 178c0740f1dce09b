/**
 * Horizontal scale on real processes: two API processes and three worker processes (each
 * `node dist/server/main.js …`, as an operator runs them) share one Postgres and one Redis. Pushes
 * and service requests go to both APIs at once; every reading is stored once, every run event is
 * delivered once, and the work is spread over the worker processes (their /metrics counts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hmacHex } from '../../providers/signing.js';
import { adminToken, createTestApp, type TestApp } from '../helpers/app.js';
import { createConnection, drainInbox } from '../helpers/ingest.js';
import { ProcessGroup, serviceEnv, type ServiceProcess } from '../helpers/processes.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

const vehiclesCount = 12;
const pushesPerVehicle = 10;
const readingsPerPush = 25;
const serviceRequests = 24;

let t: TestApp;
let receiver: Receiver;
const processes = new ProcessGroup();
let apis: ServiceProcess[];
let workers: ServiceProcess[];

beforeAll(async () => {
  t = await createTestApp({ WEBHOOK_ALLOW_NETS: '127.0.0.1/32' });
  receiver = await startReceiver();
  const env = serviceEnv(t, { WEBHOOK_ALLOW_NETS: '127.0.0.1/32' });
  apis = await Promise.all([processes.start(['api'], env), processes.start(['api'], env)]);
  workers = await Promise.all([1, 2, 3].map(() => processes.start(['worker'], env)));
}, 120_000);
afterAll(async () => {
  await processes.killAll();
  await receiver.close();
  await t.close();
});

/** Completed jobs of one queue in one process, from its /metrics. */
async function completedJobs(process: ServiceProcess, queue: string): Promise<number> {
  const text = await process.metrics();
  let total = 0;
  for (const [, value] of text.matchAll(
    new RegExp(`^job_duration_seconds_count\\{[^}]*queue="${queue}"[^}]*outcome="completed"[^}]*\\} (\\d+)$`, 'gm'),
  ))
    total += Number(value);
  return total;
}

describe('2 API + 3 worker processes', () => {
  it('store every reading and deliver every event exactly once, with the work spread over the workers', async () => {
    const acme = await t.createCompany('Scale Co');
    const connection = await createConnection(t, acme.id, 'generic');
    const secret = connection.generated_secret!;
    const vehicles = await Promise.all(
      Array.from({ length: vehiclesCount }, (_, i) =>
        t.createVehicle(acme.id, { provider_connection_id: connection.id, provider_vehicle_id: `scale-${i}` }),
      ),
    );
    const subscription = await fetch(`${apis[0]!.url}/api/v1/webhook-subscriptions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${acme.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${receiver.url}/runs`, events: ['run.created'] }),
    });
    expect(subscription.status).toBe(201);

    const start = Date.parse('2026-11-23T00:00:00Z');
    const pushes = vehicles.flatMap((_, v) =>
      Array.from({ length: pushesPerVehicle }, (_, p) => ({
        readings: Array.from({ length: readingsPerPush }, (_, r) => ({
          vehicle: `scale-${v}`,
          ts: new Date(start + (p * readingsPerPush + r) * 1000).toISOString(),
          signals: { speed_kph: r, fuel_percent: 40 + (r % 50) },
        })),
      })),
    );
    const answers = await Promise.all(
      pushes.map(async (payload, i) => {
        const body = JSON.stringify(payload);
        const res = await fetch(`${apis[i % 2]!.url}/ingest/v1/generic/${connection.id}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-signature': `sha256=${hmacHex('sha256', secret, body)}` },
          body,
        });
        return res.status;
      }),
    );
    expect(answers.every((status) => status === 202)).toBe(true);

    const requests = await Promise.all(
      Array.from({ length: serviceRequests }, (_, i) =>
        fetch(`${apis[i % 2]!.url}/admin/v1/companies/${acme.id}/service-requests`, {
          method: 'POST',
          headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            vehicle_id: vehicles[i % vehiclesCount]!.id,
            title: `Check ${i}`,
            items: [{ title: 'Inspection', type: 'inspection' }],
            customer: { name: 'Fleet Desk', email: 'desk@example.com' },
          }),
        }).then(async (res) => ({ status: res.status, body: (await res.json()) as any })),
      ),
    );
    expect(requests.every((r) => r.status === 201 || r.status === 200)).toBe(true);
    const runsCreated = new Set(requests.filter((r) => !r.body.data.folded).map((r) => r.body.data.run.id)).size;
    expect(runsCreated).toBe(vehiclesCount);

    await drainInbox(t, 90_000);
    const { rows: stored } = await t.pool.query(
      `SELECT count(*)::int AS readings, count(DISTINCT vehicle_id)::int AS vehicles FROM readings
        WHERE vehicle_id = ANY($1::uuid[])`,
      [vehicles.map((v) => v.id)],
    );
    // Two signals per reading, each stored once (the primary key would refuse a second copy).
    expect(stored[0]).toEqual({ readings: pushes.length * readingsPerPush * 2, vehicles: vehiclesCount });

    await expect
      .poll(() => receiver.received.filter((r) => r.path === '/runs').length, { timeout: 60_000 })
      .toBe(runsCreated);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const eventIds = receiver.received.filter((r) => r.path === '/runs').map((r) => r.json.event_id ?? r.json.id);
    expect(new Set(eventIds).size).toBe(runsCreated);
    const { rows: attempts } = await t.pool.query(
      `SELECT count(*)::int AS n FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
        WHERE d.subscription_id = $1`,
      [((await subscription.json()) as { data: { id: string } }).data.id],
    );
    expect(attempts[0].n).toBe(runsCreated);

    const perWorker = await Promise.all(
      workers.map(async (w) => ({
        ingest: await completedJobs(w, 'ingest'),
        health: await completedJobs(w, 'health'),
        webhooks: await completedJobs(w, 'webhooks'),
      })),
    );
    console.log(`scale-out: completed jobs per worker process ${JSON.stringify(perWorker)}`);
    const busy = perWorker.filter((w) => w.ingest + w.health + w.webhooks > 0).length;
    expect(busy).toBeGreaterThanOrEqual(2);
    expect(perWorker.reduce((sum, w) => sum + w.ingest, 0)).toBeGreaterThan(0);
  }, 240_000);
});
