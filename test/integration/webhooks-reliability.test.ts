import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/db/pool.js';
import { relayWebhookEvents } from '../../src/db/webhooks.js';
import { coreDeliverer } from '../../src/webhooks/deliver-core.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createConnection, pushGeneric, settle } from '../helpers/ingest.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

let t: TestApp;
let receiver: Receiver;
let acme: { id: string; key: string };

beforeAll(async () => {
  t = await createTestApp({ WEBHOOK_ALLOW_NETS: '127.0.0.1/32', WEBHOOK_TIMEOUT_MS: '1000' });
  receiver = await startReceiver();
  acme = await t.createCompany();
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

async function openRun() {
  const vehicle = await t.createVehicle(acme.id);
  const response = await t.admin('POST', `/companies/${acme.id}/service-requests`, { vehicle_id: vehicle.id, items: [{ title: 'Oil change', type: 'oil_change' }] });
  return response.json().data.run.id as string;
}

async function deliveriesOf(subscriptionId: string) {
  return (await t.api('GET', `/webhook-subscriptions/${subscriptionId}/deliveries?limit=200`, acme.key)).json().data as Array<any>;
}

describe('SSRF guard at connect time', () => {
  it('records a blocked delivery as a failed attempt with its reason, without connecting', async () => {
    const subscription = (await t.api('POST', '/webhook-subscriptions', acme.key, { url: 'https://hooks.example.com/fleet', events: ['run.created'] })).json().data;
    await openRun();
    const { deliveryIds } = await withTransaction(t.pool, (tx) => relayWebhookEvents(tx, 100));
    expect(deliveryIds).toHaveLength(1);
    // The name resolves to the cloud metadata address when the attempt is made (DNS rebinding).
    const deliver = coreDeliverer({
      pool: t.pool, secretsKey: t.config.secretsKey, timeoutMs: 1000, allowNets: [], now: () => new Date(),
      resolve: async () => [{ address: '169.254.169.254', family: 4 }],
    });
    expect(await deliver(deliveryIds[0]!)).toBe('failed');
    const [delivery] = await deliveriesOf(subscription.id);
    expect(delivery).toMatchObject({ status: 'failed', attempts: [{ attempt_number: 1, error_code: 'ssrf_blocked', response_status: null }] });
    expect(delivery.attempts[0].error_message).toMatch(/metadata/);
    // A second run of the same job sends nothing: the delivery was claimed for its single attempt.
    expect(await deliver(deliveryIds[0]!)).toBe('skipped');
  });
});

describe('relay and delivery survive Redis loss and restarts', () => {
  it('events written while no worker ran are relayed and delivered once per subscription when workers start', async () => {
    const first = (await t.api('POST', '/webhook-subscriptions', acme.key, { url: `${receiver.url}/a`, events: ['run.created', 'run.completed'] })).json().data;
    const second = (await t.api('POST', '/webhook-subscriptions', acme.key, { url: `${receiver.url}/b`, events: ['run.created'] })).json().data;
    const runIds = [await openRun(), await openRun()];
    await t.admin('POST', `/runs/${runIds[0]}/complete`);
    // Redis loses the queued relay jobs.
    await t.queues.queue('webhooks').obliterate({ force: true });

    const workers = await t.startWorkers(['webhooks']);
    await expect.poll(() => receiver.received.length, { timeout: 20_000 }).toBe(5);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receiver.received.filter((r) => r.path === '/a').map((r) => r.json.event).sort()).toEqual(['run.completed', 'run.created', 'run.created']);
    expect(receiver.received.filter((r) => r.path === '/b').map((r) => r.json.event)).toEqual(['run.created', 'run.created']);

    // Relaying again creates nothing more: one delivery per (event, subscription).
    const again = await withTransaction(t.pool, (tx) => relayWebhookEvents(tx, 100));
    expect(again.deliveryIds).toEqual([]);
    expect((await deliveriesOf(first.id)).length + (await deliveriesOf(second.id)).length).toBe(5);
    await workers.close();
  });
});

describe('service requests from health', () => {
  it('a vehicle turning critical opens a run with its alerts as items (run.created sent); folding afterwards; off by company setting', async () => {
    const subscription = (await t.api('POST', '/webhook-subscriptions', acme.key, { url: `${receiver.url}/health`, events: ['run.created'] })).json().data;
    const connection = await createConnection(t, acme.id, 'generic');
    const hot = await t.createVehicle(acme.id, { provider_connection_id: connection.id, provider_vehicle_id: 'hot-1' });
    await t.startWorkers(['ingest', 'health', 'runs', 'webhooks']);
    await pushGeneric(t, 'generic', connection.id, connection.generated_secret!, {
      readings: [
        { vehicle: 'hot-1', ts: new Date(Date.now() - 60_000).toISOString(), signals: { odometer_km: 1000, engine_state: 'on', coolant_temp_c: 90 } },
        { vehicle: 'hot-1', ts: new Date(Date.now() - 30_000).toISOString(), signals: { coolant_temp_c: 114 } },
      ],
    });
    await settle(t);
    await expect.poll(async () => (await t.pool.query(`SELECT items FROM runs WHERE vehicle_id = $1`, [hot.id])).rows, { timeout: 15_000 }).toHaveLength(1);
    const { rows } = await t.pool.query(`SELECT items, title FROM runs WHERE vehicle_id = $1`, [hot.id]);
    expect(rows[0].title).toBe('Service requested by vehicle health');
    expect(rows[0].items).toEqual([expect.objectContaining({ type: 'coolant_temperature_high', status: 'pending' })]);
    await expect.poll(() => receiver.received.filter((r) => r.path === '/health').length, { timeout: 10_000 }).toBe(1);
    expect(subscription.id).toBeDefined();

    // The same company with the setting off: health changes open nothing.
    const off = await t.createCompany('Manual Dispatch Inc');
    await t.admin('PATCH', `/companies/${off.id}`, { settings: { service_requests_from_health: false } });
    const offConnection = await createConnection(t, off.id, 'generic');
    const cold = await t.createVehicle(off.id, { provider_connection_id: offConnection.id, provider_vehicle_id: 'hot-2' });
    await pushGeneric(t, 'generic', offConnection.id, offConnection.generated_secret!, {
      readings: [
        { vehicle: 'hot-2', ts: new Date(Date.now() - 60_000).toISOString(), signals: { odometer_km: 1000, engine_state: 'on', coolant_temp_c: 90 } },
        { vehicle: 'hot-2', ts: new Date(Date.now() - 30_000).toISOString(), signals: { coolant_temp_c: 114 } },
      ],
    });
    await settle(t);
    await expect.poll(async () => (await t.pool.query(`SELECT count(*)::int AS n FROM health_events WHERE vehicle_id = $1 AND consumed_at IS NULL`, [cold.id])).rows[0].n, { timeout: 10_000 }).toBe(0);
    expect((await t.pool.query(`SELECT count(*)::int AS n FROM runs WHERE vehicle_id = $1`, [cold.id])).rows[0].n).toBe(0);
    expect((await t.api('GET', `/vehicles/${cold.id}`, off.key)).json().data.health.status).toBe('critical');
  });
});
