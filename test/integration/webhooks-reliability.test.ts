import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/db/pool.js';
import {
  claimLaneDeliveries,
  failAbandonedDeliveries,
  recordAttempts,
  relayWebhookEvents,
  type PendingDelivery,
} from '../../src/db/webhooks.js';
import type { DeliveryDeps as CoreDeliveryDeps } from '../../src/delivery/deps.js';
import { coreDeliverer } from '../../src/webhooks/deliver-core.js';
import { requestLanes } from '../../src/queue/enqueue-webhooks.js';
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

async function openRun(companyId = acme.id) {
  const vehicle = await t.createVehicle(companyId);
  const response = await t.admin('POST', `/companies/${companyId}/service-requests`, {
    vehicle_id: vehicle.id,
    items: [{ title: 'Oil change', type: 'oil_change' }],
  });
  return response.json().data.run.id as string;
}

async function deliveriesOf(subscriptionId: string, key = acme.key) {
  return (await t.api('GET', `/webhook-subscriptions/${subscriptionId}/deliveries?limit=200`, key)).json()
    .data as Array<any>;
}

/** A lane deliverer as the worker builds it, with the operator log captured. */
function deliverer(options: { allowNets: string[]; resolve?: CoreDeliveryDeps['resolve'] }) {
  const warnings: Array<Record<string, unknown>> = [];
  const deliverLane = coreDeliverer({
    pool: t.pool,
    queues: t.queues,
    log: { warn: (fields: Record<string, unknown>) => warnings.push(fields) } as CoreDeliveryDeps['log'],
    secretsKey: t.config.secretsKey,
    timeoutMs: 1000,
    now: () => new Date(),
    ...options,
  });
  return { deliverLane, warnings };
}

describe('SSRF guard at connect time', () => {
  it('records a blocked delivery as a failed attempt without the address; operators get address and reason', async () => {
    const subscription = (
      await t.api('POST', '/webhook-subscriptions', acme.key, {
        url: 'https://hooks.example.com/fleet',
        events: ['run.created'],
      })
    ).json().data;
    await openRun();
    const { deliveries } = await withTransaction(t.pool, (tx) => relayWebhookEvents(tx, 100));
    expect(deliveries).toEqual([{ id: expect.any(String), subscriptionId: subscription.id, companyId: acme.id }]);
    // The name resolves to the cloud metadata address when the attempt is made (DNS rebinding).
    const { deliverLane, warnings } = deliverer({
      allowNets: [],
      resolve: async () => [{ address: '169.254.169.254', family: 4 }],
    });
    const lane = { subscriptionId: subscription.id, companyId: acme.id };
    expect((await deliverLane(lane)).outcomes).toEqual([
      { deliveryId: deliveries[0]!.id, succeeded: false, durationMs: expect.any(Number) },
    ]);
    const response = await t.api('GET', `/webhook-subscriptions/${subscription.id}/deliveries`, acme.key);
    const [delivery] = response.json().data;
    expect(delivery).toMatchObject({
      status: 'failed',
      attempts: [
        {
          attempt_number: 1,
          error_code: 'ssrf_blocked',
          response_status: null,
          error_message: 'the host resolves to a private or reserved address; nothing was sent',
        },
      ],
    });
    expect(response.body).not.toContain('169.254');
    expect(response.body).not.toContain('metadata');
    expect(warnings).toEqual([{ deliveryId: deliveries[0]!.id, address: '169.254.169.254', reason: 'metadata' }]);
    // Another turn of the lane sends nothing: the delivery was claimed for its single attempt.
    expect((await deliverLane(lane)).outcomes).toEqual([]);
  });

  it('a Send test refused by the guard shows the tenant no address, also through IPv4-mapped IPv6', async () => {
    const subscription = (
      await t.api('POST', '/webhook-subscriptions', acme.key, {
        url: 'https://hooks.example.com/send-test',
        events: ['run.completed'],
      })
    ).json().data;
    const sent = await t.api('POST', `/webhook-subscriptions/${subscription.id}/test`, acme.key);
    expect(sent.statusCode).toBe(202);
    expect(sent.body).not.toMatch(/10\.20|ffff/);
    await withTransaction(t.pool, (tx) => relayWebhookEvents(tx, 100));
    const { deliverLane, warnings } = deliverer({
      allowNets: [],
      resolve: async () => [
        { address: '10.20.30.40', family: 4 },
        { address: '::ffff:10.20.30.41', family: 6 },
      ],
    });
    expect((await deliverLane({ subscriptionId: subscription.id, companyId: acme.id })).outcomes).toHaveLength(1);
    const response = await t.api('GET', `/webhook-subscriptions/${subscription.id}/deliveries`, acme.key);
    expect(response.json().data).toMatchObject([
      {
        event: 'webhook.test',
        status: 'failed',
        attempts: [
          {
            error_code: 'ssrf_blocked',
            error_message: 'the host resolves to a private or reserved address; nothing was sent',
          },
        ],
      },
    ]);
    expect(response.body).not.toMatch(/10\.20\.30|ffff|private\)|ipv4_mapped/);
    expect(warnings).toMatchObject([{ address: '10.20.30.40', reason: 'private' }]);
  });
});

describe('lanes', () => {
  it('asks for one job per subscription with work, however many deliveries; asking again adds nothing', async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    const pending: PendingDelivery[] = Array.from({ length: 215 }, (_, i) => ({
      id: randomUUID(),
      subscriptionId: i % 3 === 0 && i < 15 ? b : a,
      companyId: acme.id,
    }));
    const queue = t.queues.queue('webhooks');
    await requestLanes(t.queues, pending);
    await requestLanes(t.queues, pending.slice(0, 20));
    const jobs = (await queue.getJobs(['waiting'])).filter((job) => job.name === 'webhooks.deliver');
    await queue.obliterate({ force: true });
    expect(jobs.map((job) => job.data).sort((x, y) => x.subscriptionId.localeCompare(y.subscriptionId))).toEqual(
      [
        { subscriptionId: a, companyId: acme.id },
        { subscriptionId: b, companyId: acme.id },
      ].sort((x, y) => x.subscriptionId.localeCompare(y.subscriptionId)),
    );
  });

  it("a lane turn sends each of its subscription's deliveries once and records each attempt; another turn sends nothing", async () => {
    const company = await t.createCompany('Batch Co');
    const ok = (
      await t.api('POST', '/webhook-subscriptions', company.key, {
        url: `${receiver.url}/batch-ok`,
        events: ['run.created'],
      })
    ).json().data;
    const blocked = (
      await t.api('POST', '/webhook-subscriptions', company.key, {
        url: 'https://hooks.example.com/batch',
        events: ['run.created'],
      })
    ).json().data;
    for (let i = 0; i < 3; i++) await openRun(company.id);
    const { deliveries } = await withTransaction(t.pool, (tx) => relayWebhookEvents(tx, 100));
    expect(deliveries).toHaveLength(6);
    const { deliverLane } = deliverer({
      allowNets: ['127.0.0.1/32'],
      resolve: async () => [{ address: '10.0.0.1', family: 4 }],
    });
    const idsOf = (subscriptionId: string) =>
      deliveries
        .filter((d) => d.subscriptionId === subscriptionId)
        .map((d) => d.id)
        .sort();
    const okTurn = await deliverLane({ subscriptionId: ok.id, companyId: company.id });
    expect(okTurn).toMatchObject({ deferred: false });
    expect(okTurn.outcomes.map((o) => o.deliveryId).sort()).toEqual(idsOf(ok.id));
    expect(okTurn.outcomes.every((o) => o.succeeded)).toBe(true);
    const blockedTurn = await deliverLane({ subscriptionId: blocked.id, companyId: company.id });
    expect(blockedTurn.outcomes.map((o) => o.deliveryId).sort()).toEqual(idsOf(blocked.id));
    expect(blockedTurn.outcomes.some((o) => o.succeeded)).toBe(false);
    expect(receiver.received.filter((r) => r.path === '/batch-ok')).toHaveLength(3);
    const ids = deliveries.map((d) => d.id);
    const { rows } = await t.pool.query<{ status: string; attempts: number; error: string | null }>(
      `SELECT d.status, count(a.attempt_number)::int AS attempts, max(a.error_code) AS error
       FROM webhook_deliveries d JOIN webhook_attempts a ON a.delivery_id = d.id WHERE d.id = ANY ($1::uuid[]) GROUP BY d.id`,
      [ids],
    );
    expect(rows.map((r) => [r.status, r.attempts, r.error]).sort()).toEqual([
      ['failed', 1, 'ssrf_blocked'],
      ['failed', 1, 'ssrf_blocked'],
      ['failed', 1, 'ssrf_blocked'],
      ['succeeded', 1, null],
      ['succeeded', 1, null],
      ['succeeded', 1, null],
    ]);
    expect((await deliverLane({ subscriptionId: ok.id, companyId: company.id })).outcomes).toEqual([]);
    expect(receiver.received.filter((r) => r.path === '/batch-ok')).toHaveLength(3);
  });
});

describe('failures inside a lane turn', () => {
  it('a delivery that cannot be prepared is recorded as failed; other lanes are sent and recorded', async () => {
    const company = await t.createCompany('Broken Secret Co');
    const good = (
      await t.api('POST', '/webhook-subscriptions', company.key, {
        url: `${receiver.url}/good-secret`,
        events: ['run.created'],
      })
    ).json().data;
    const bad = (
      await t.api('POST', '/webhook-subscriptions', company.key, {
        url: `${receiver.url}/bad-secret`,
        events: ['run.created'],
      })
    ).json().data;
    // A secret that no longer decrypts (e.g. written under another SECRETS_KEY).
    await t.pool.query(`UPDATE webhook_subscriptions SET secret_ciphertext = '\\x00ff'::bytea WHERE id = $1`, [bad.id]);
    await openRun(company.id);
    await openRun(company.id);
    await withTransaction(t.pool, (tx) => relayWebhookEvents(tx, 100));
    const { deliverLane } = deliverer({ allowNets: ['127.0.0.1/32'] });
    const badTurn = await deliverLane({ subscriptionId: bad.id, companyId: company.id });
    expect(badTurn.outcomes.map((o) => o.succeeded)).toEqual([false, false]);
    const goodTurn = await deliverLane({ subscriptionId: good.id, companyId: company.id });
    expect(goodTurn.outcomes.map((o) => o.succeeded)).toEqual([true, true]);
    expect(receiver.received.filter((r) => r.path === '/good-secret')).toHaveLength(2);
    expect(receiver.received.filter((r) => r.path === '/bad-secret')).toHaveLength(0);
    const failed = await deliveriesOf(bad.id, company.key);
    expect(failed).toHaveLength(2);
    for (const delivery of failed) {
      expect(delivery).toMatchObject({
        status: 'failed',
        attempts: [{ error_code: 'internal_error', response_status: null }],
      });
    }
  });

  it('a real attempt replaces a recovery sweep that wrongly gave its delivery up as worker_lost', async () => {
    const company = await t.createCompany('Slow Job Co');
    const subscription = (
      await t.api('POST', '/webhook-subscriptions', company.key, {
        url: `${receiver.url}/late`,
        events: ['run.created'],
      })
    ).json().data;
    await openRun(company.id);
    await withTransaction(t.pool, (tx) => relayWebhookEvents(tx, 100));
    // Claimed as its send starts.
    const [delivery] = await claimLaneDeliveries(t.pool, subscription.id, 10);
    // The sweep runs while the attempt is still in flight.
    expect(await failAbandonedDeliveries(t.pool, new Date(Date.now() + 60_000))).toBe(1);
    expect((await deliveriesOf(subscription.id, company.key))[0]).toMatchObject({
      status: 'failed',
      attempts: [{ error_code: 'worker_lost', trigger: 'recovery' }],
    });
    await recordAttempts(t.pool, [
      {
        deliveryId: delivery!.deliveryId,
        attemptNumber: 1,
        trigger: 'scheduled',
        url: delivery!.url,
        startedAt: new Date(),
        durationMs: 12,
        responseStatus: 204,
        responseExcerpt: '',
        responseTruncated: false,
        errorCode: null,
        errorMessage: null,
        resolvedIp: '127.0.0.1',
        succeeded: true,
      },
    ]);
    expect((await deliveriesOf(subscription.id, company.key))[0]).toMatchObject({
      status: 'succeeded',
      attempts: [{ attempt_number: 1, trigger: 'scheduled', response_status: 204, error_code: null }],
    });
  });
});

describe('dispatch requests lost with Redis', () => {
  it('the sweep proposes for a new run whose request was lost, once, and never over an operator proposal', async () => {
    const company = await t.createCompany('Lost Dispatch Co');
    await t.admin('POST', `/companies/${company.id}/roster`, {
      type: 'technician',
      name: 'Mo Reyes',
      skills: ['oil_change'],
    });
    const lost = await openRun(company.id);
    const manual = await openRun(company.id);
    const operatorProposal = await t.admin('POST', `/runs/${manual}/dispatch-proposal`, {
      assignee: { type: 'shop', id: 'shop-77', name: 'Their Own Shop' },
      reason: 'operator choice',
    });
    expect(operatorProposal.statusCode).toBe(200);
    // Redis loses the queued dispatch requests; the runs are older than the sweep's grace.
    await t.queues.queue('runs').obliterate({ force: true });
    await t.pool.query(`UPDATE runs SET created_at = created_at - interval '2 minutes' WHERE id = ANY ($1::uuid[])`, [
      [lost, manual],
    ]);
    const proposalsOf = async (runId: string) =>
      (
        await t.pool.query(
          `SELECT count(*)::int AS n FROM webhook_events WHERE run_id = $1 AND kind = 'run.dispatch_proposed'`,
          [runId],
        )
      ).rows[0].n;

    await t.queues.add('runs.dispatch-sweep', {});
    const workers = await t.startWorkers(['runs']);
    await expect.poll(() => proposalsOf(lost), { timeout: 15_000 }).toBe(1);
    const { rows } = await t.pool.query(
      `SELECT id, dispatch_proposal, dispatch_checked_at FROM runs WHERE id = ANY ($1::uuid[])`,
      [[lost, manual]],
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.get(lost).dispatch_proposal).toMatchObject({ assignee: { type: 'technician', name: 'Mo Reyes' } });
    expect(byId.get(manual).dispatch_proposal).toMatchObject({
      assignee: { name: 'Their Own Shop' },
      reason: 'operator choice',
    });
    await expect
      .poll(
        async () =>
          (await t.pool.query(`SELECT dispatch_checked_at FROM runs WHERE id = $1`, [manual])).rows[0]
            .dispatch_checked_at,
        { timeout: 15_000 },
      )
      .not.toBeNull();

    // Another sweep and a repeated request change nothing.
    await t.queues.add('runs.dispatch-sweep', {});
    await t.queues.add('runs.dispatch', { companyId: company.id, runId: lost });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await proposalsOf(lost)).toBe(1);
    expect(await proposalsOf(manual)).toBe(1);
    await workers.close();
  });
});

describe('relay and delivery survive Redis loss and restarts', () => {
  it('events written while no worker ran are relayed and delivered once per subscription when workers start', async () => {
    const first = (
      await t.api('POST', '/webhook-subscriptions', acme.key, {
        url: `${receiver.url}/a`,
        events: ['run.created', 'run.completed'],
      })
    ).json().data;
    const second = (
      await t.api('POST', '/webhook-subscriptions', acme.key, { url: `${receiver.url}/b`, events: ['run.created'] })
    ).json().data;
    const runIds = [await openRun(), await openRun()];
    await t.admin('POST', `/runs/${runIds[0]}/complete`);
    // Redis loses the queued relay jobs.
    await t.queues.queue('webhooks').obliterate({ force: true });

    const workers = await t.startWorkers(['webhooks']);
    const atAOrB = () => receiver.received.filter((r) => r.path === '/a' || r.path === '/b');
    await expect.poll(() => atAOrB().length, { timeout: 20_000 }).toBe(5);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(
      receiver.received
        .filter((r) => r.path === '/a')
        .map((r) => r.json.event)
        .sort(),
    ).toEqual(['run.completed', 'run.created', 'run.created']);
    expect(receiver.received.filter((r) => r.path === '/b').map((r) => r.json.event)).toEqual([
      'run.created',
      'run.created',
    ]);

    // Relaying again creates nothing more: one delivery per (event, subscription).
    const again = await withTransaction(t.pool, (tx) => relayWebhookEvents(tx, 100));
    expect(again.deliveries).toEqual([]);
    expect((await deliveriesOf(first.id)).length + (await deliveriesOf(second.id)).length).toBe(5);
    await workers.close();
  });
});

describe('service requests from health', () => {
  it('a vehicle turning critical opens a run with its alerts as items (run.created sent); folding afterwards; off by company setting', async () => {
    const subscription = (
      await t.api('POST', '/webhook-subscriptions', acme.key, {
        url: `${receiver.url}/health`,
        events: ['run.created'],
      })
    ).json().data;
    const connection = await createConnection(t, acme.id, 'generic');
    const hot = await t.createVehicle(acme.id, { provider_connection_id: connection.id, provider_vehicle_id: 'hot-1' });
    await t.startWorkers(['ingest', 'health', 'runs', 'webhooks']);
    await pushGeneric(t, 'generic', connection.id, connection.generated_secret!, {
      readings: [
        {
          vehicle: 'hot-1',
          ts: new Date(Date.now() - 60_000).toISOString(),
          signals: { odometer_km: 1000, engine_state: 'on', coolant_temp_c: 90 },
        },
        { vehicle: 'hot-1', ts: new Date(Date.now() - 30_000).toISOString(), signals: { coolant_temp_c: 114 } },
      ],
    });
    await settle(t);
    await expect
      .poll(async () => (await t.pool.query(`SELECT items FROM runs WHERE vehicle_id = $1`, [hot.id])).rows, {
        timeout: 15_000,
      })
      .toHaveLength(1);
    const { rows } = await t.pool.query(`SELECT items, title FROM runs WHERE vehicle_id = $1`, [hot.id]);
    expect(rows[0].title).toBe('Service requested by vehicle health');
    expect(rows[0].items).toEqual([expect.objectContaining({ type: 'coolant_temperature_high', status: 'pending' })]);
    const createdFor = () => receiver.received.filter((r) => r.path === '/health').map((r) => r.json.data.vehicle.id);
    await expect.poll(createdFor, { timeout: 10_000 }).toEqual([hot.id]);
    expect((await deliveriesOf(subscription.id)).map((d) => d.event)).toEqual(['run.created']);

    // A vehicle that already has an open run: the health request folds into it (no new run, no run.created).
    const busy = await t.createVehicle(acme.id, {
      provider_connection_id: connection.id,
      provider_vehicle_id: 'hot-busy',
    });
    await t.admin('POST', `/companies/${acme.id}/service-requests`, {
      vehicle_id: busy.id,
      items: [{ title: 'Oil change', type: 'oil_change' }],
    });
    await expect.poll(createdFor, { timeout: 10_000 }).toEqual([hot.id, busy.id]);
    await pushGeneric(t, 'generic', connection.id, connection.generated_secret!, {
      readings: [
        {
          vehicle: 'hot-busy',
          ts: new Date(Date.now() - 60_000).toISOString(),
          signals: { odometer_km: 2000, engine_state: 'on', coolant_temp_c: 90 },
        },
        { vehicle: 'hot-busy', ts: new Date(Date.now() - 30_000).toISOString(), signals: { coolant_temp_c: 114 } },
      ],
    });
    await settle(t);
    const itemTypes = async () =>
      (await t.pool.query(`SELECT items FROM runs WHERE vehicle_id = $1`, [busy.id])).rows.map((r) =>
        r.items.map((i: { type: string }) => i.type),
      );
    await expect.poll(itemTypes, { timeout: 15_000 }).toEqual([['oil_change', 'coolant_temperature_high']]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(createdFor()).toEqual([hot.id, busy.id]);

    // The same company with the setting off: health changes open nothing.
    const off = await t.createCompany('Manual Dispatch Inc');
    await t.admin('PATCH', `/companies/${off.id}`, { settings: { service_requests_from_health: false } });
    const offConnection = await createConnection(t, off.id, 'generic');
    const cold = await t.createVehicle(off.id, {
      provider_connection_id: offConnection.id,
      provider_vehicle_id: 'hot-2',
    });
    await pushGeneric(t, 'generic', offConnection.id, offConnection.generated_secret!, {
      readings: [
        {
          vehicle: 'hot-2',
          ts: new Date(Date.now() - 60_000).toISOString(),
          signals: { odometer_km: 1000, engine_state: 'on', coolant_temp_c: 90 },
        },
        { vehicle: 'hot-2', ts: new Date(Date.now() - 30_000).toISOString(), signals: { coolant_temp_c: 114 } },
      ],
    });
    await settle(t);
    await expect
      .poll(
        async () =>
          (
            await t.pool.query(
              `SELECT count(*)::int AS n FROM health_events WHERE vehicle_id = $1 AND consumed_at IS NULL`,
              [cold.id],
            )
          ).rows[0].n,
        { timeout: 10_000 },
      )
      .toBe(0);
    expect((await t.pool.query(`SELECT count(*)::int AS n FROM runs WHERE vehicle_id = $1`, [cold.id])).rows[0].n).toBe(
      0,
    );
    expect((await t.api('GET', `/vehicles/${cold.id}`, off.key)).json().data.health.status).toBe('critical');
  });
});
