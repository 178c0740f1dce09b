/**
 * Lanes of core deliveries against real Postgres, Redis and a receiver on 127.0.0.1: bounded
 * turns, slow start, the per-company share of a process's slots, and what recovery does with
 * claimed (started) and pending deliveries.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/db/pool.js';
import { claimLaneDeliveries, insertWebhookEvents, relayWebhookEvents } from '../../src/db/webhooks.js';
import { abandonedAfterMs } from '../../src/delivery/lane-timing.js';
import { coreDeliverer, laneStartWidth, laneWidth } from '../../src/webhooks/deliver-core.js';
import { lanesPerCompany } from '../../src/delivery/lane-slots.js';
import { deliverySlotsPerProcess } from '../../src/delivery/lane-slots.js';
import { recoverDeliveries } from '../../src/webhooks/recover.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

let t: TestApp;
let receiver: Receiver;

beforeAll(async () => {
  t = await createTestApp({ WEBHOOK_ALLOW_NETS: '127.0.0.1/32' });
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await t.close();
});

const silentLog = { warn: () => undefined };

function deliverer() {
  return coreDeliverer({
    pool: t.pool,
    queues: t.queues,
    log: silentLog,
    secretsKey: t.config.secretsKey,
    timeoutMs: 5000,
    allowNets: ['127.0.0.1/32'],
    now: () => new Date(),
  });
}

async function subscribe(companyKey: string, path: string): Promise<string> {
  const response = await t.api('POST', '/webhook-subscriptions', companyKey, {
    url: `${receiver.url}${path}`,
    events: ['run.created'],
  });
  expect(response.statusCode).toBe(201);
  return response.json().data.id;
}

/** `count` run.created events of the company, relayed into deliveries for its subscriptions. */
async function events(companyId: string, count: number): Promise<void> {
  await insertWebhookEvents(
    t.pool,
    Array.from({ length: count }, (_, i) => ({
      companyId,
      runId: null,
      kind: 'run.created',
      payload: { id: randomUUID(), title: `run ${i}` },
      subscriptionId: null,
    })),
  );
  while ((await withTransaction(t.pool, (tx) => relayWebhookEvents(tx, 500))).relayed > 0);
}

async function statusCounts(subscriptionId: string): Promise<Record<string, number>> {
  const { rows } = await t.pool.query<{ status: string; n: number }>(
    `SELECT status, count(*)::int AS n FROM webhook_deliveries WHERE subscription_id = $1 GROUP BY status`,
    [subscriptionId],
  );
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

async function laneJobs(subscriptionId: string, states: Array<'waiting' | 'delayed'>) {
  const jobs = await t.queues.queue('webhooks').getJobs(states);
  return jobs.filter((job) => job.name === 'webhooks.deliver' && job.data.subscriptionId === subscriptionId);
}

describe('a lane turn', () => {
  it('starts no send after its time: started ones finish and are recorded, the rest stay pending, unclaimed, and the lane asks for another turn', async () => {
    const company = await t.createCompany('Slow Lane Co');
    const subscription = await subscribe(company.key, '/slow-lane');
    // Each answer takes longer than a turn, so the first sends are all the turn starts.
    receiver.answer('/slow-lane', { status: 204, delayMs: 1500 });
    await events(company.id, 150);

    const turn = await deliverer()({ subscriptionId: subscription, companyId: company.id });
    expect(turn.deferred).toBe(false);
    expect(turn.outcomes).toHaveLength(laneStartWidth);
    expect(turn.outcomes.every((o) => o.succeeded)).toBe(true);
    expect(receiver.received.filter((r) => r.path === '/slow-lane')).toHaveLength(laneStartWidth);
    expect(await statusCounts(subscription)).toEqual({ succeeded: laneStartWidth, pending: 150 - laneStartWidth });
    const { rows } = await t.pool.query(
      `SELECT count(*)::int AS n FROM webhook_deliveries
       WHERE subscription_id = $1 AND status = 'pending' AND claimed_at IS NULL`,
      [subscription],
    );
    expect(rows[0].n).toBe(150 - laneStartWidth);
    expect(await laneJobs(subscription, ['waiting'])).toHaveLength(1);
    await t.queues.queue('webhooks').obliterate({ force: true });
  });

  it('opens up to laneWidth requests at once as fast as its receiver answers, never more', async () => {
    let active = 0;
    let mostActive = 0;
    let served = 0;
    const server = createServer((req, res) => {
      active += 1;
      mostActive = Math.max(mostActive, active);
      req.resume();
      req.on('end', () =>
        setTimeout(() => {
          active -= 1;
          served += 1;
          res.writeHead(204).end();
        }, 40),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const company = await t.createCompany('Wide Lane Co');
    const response = await t.api('POST', '/webhook-subscriptions', company.key, {
      url: `http://127.0.0.1:${(server.address() as { port: number }).port}/wide`,
      events: ['run.created'],
    });
    const subscription = response.json().data.id as string;
    await events(company.id, 2500);
    const deliverLane = deliverer();
    let sent = 0;
    for (let turn = 0; sent < 2500 && turn < 60; turn++) {
      sent += (await deliverLane({ subscriptionId: subscription, companyId: company.id })).outcomes.length;
    }
    server.close();
    expect({ sent, served }).toEqual({ sent: 2500, served: 2500 });
    expect(await statusCounts(subscription)).toEqual({ succeeded: 2500 });
    // Widened from laneStartWidth to about laneWidth (a sender between two requests is not counted), never past it.
    expect(mostActive).toBeGreaterThan(laneWidth / 2);
    expect(mostActive).toBeLessThanOrEqual(laneWidth);
    await t.queues.queue('webhooks').obliterate({ force: true });
  });

  it("a company runs past its share only while a quarter of the slots stays free; then its next lane is put back and another company's lane runs", async () => {
    const busy = await t.createCompany('Many Dead Receivers Co');
    const other = await t.createCompany('Quiet Neighbour Co');
    receiver.answer('/hang', { status: 204, delayMs: 4000 });
    // The busy company alone may fill the process up to the reserved quarter.
    const fill = deliverySlotsPerProcess - lanesPerCompany;
    const hanging = [];
    for (let i = 0; i <= fill; i++) hanging.push(await subscribe(busy.key, '/hang'));
    const quiet = await subscribe(other.key, '/quiet');
    await events(busy.id, 1);
    await events(other.id, 1);

    const deliverLane = deliverer();
    const running = hanging.slice(0, fill).map((id) => deliverLane({ subscriptionId: id, companyId: busy.id }));
    // Past its share of lanesPerCompany: the process had room, so all of them run.
    await expect.poll(() => receiver.received.filter((r) => r.path === '/hang').length, { timeout: 10_000 }).toBe(fill);

    const extra = hanging[fill]!;
    expect(await deliverLane({ subscriptionId: extra, companyId: busy.id })).toEqual({ outcomes: [], deferred: true });
    expect(await statusCounts(extra)).toEqual({ pending: 1 });
    const [later] = await laneJobs(extra, ['delayed']);
    expect(later?.data).toEqual({ subscriptionId: extra, companyId: busy.id });

    // The reserved quarter: another company's lane gets a slot at once.
    const neighbour = await deliverLane({ subscriptionId: quiet, companyId: other.id });
    expect(neighbour).toMatchObject({ deferred: false, outcomes: [{ succeeded: true }] });
    expect(receiver.received.filter((r) => r.path === '/hang')).toHaveLength(fill);

    // Once the company's lanes finish, its lane runs.
    await Promise.all(running);
    expect((await deliverLane({ subscriptionId: extra, companyId: busy.id })).outcomes).toHaveLength(1);
    await t.queues.queue('webhooks').obliterate({ force: true });
  });
});

describe('claims', () => {
  it('start at their cursor: a delivery created before it is left for the claim from the start', async () => {
    const company = await t.createCompany('Claim Cursor Co');
    const subscription = await subscribe(company.key, '/cursor');
    await events(company.id, 4);
    const first = await claimLaneDeliveries(t.pool, subscription, 2);
    expect(first).toHaveLength(2);
    // A relay pass that committed late: its delivery is older than what the lane has claimed.
    await events(company.id, 1);
    await t.pool.query(
      `UPDATE webhook_deliveries SET created_at = $2::timestamptz - interval '1 second'
       WHERE subscription_id = $1 AND status = 'pending'
         AND created_at = (SELECT max(created_at) FROM webhook_deliveries WHERE subscription_id = $1)`,
      [subscription, first[0]!.createdAt],
    );
    const fromCursor = await claimLaneDeliveries(t.pool, subscription, 10, first[1]!.createdAt);
    expect(fromCursor).toHaveLength(2);
    expect(await statusCounts(subscription)).toEqual({ sending: 4, pending: 1 });
    const fromStart = await claimLaneDeliveries(t.pool, subscription, 10);
    expect(fromStart).toHaveLength(1);
    expect(Date.parse(fromStart[0]!.createdAt)).toBeLessThan(Date.parse(first[0]!.createdAt));
    // Settled, so the recovery tests below see only their own claims.
    await t.pool.query(
      `UPDATE webhook_deliveries SET status = 'succeeded', completed_at = now() WHERE subscription_id = $1`,
      [subscription],
    );
  });
});

describe('recovery', () => {
  it('fails as worker_lost only what a dead turn claimed, that is what it had started; the rest is sent once', async () => {
    const company = await t.createCompany('Crashed Worker Co');
    const subscription = await subscribe(company.key, '/recovered');
    await events(company.id, 10);
    // A dead worker's turn had started three sends: a lane claims only as its sends start.
    const claimed = await claimLaneDeliveries(t.pool, subscription, 3);
    expect(claimed).toHaveLength(3);
    expect(await statusCounts(subscription)).toEqual({ sending: 3, pending: 7 });

    const recover = (now: Date) =>
      recoverDeliveries({ pool: t.pool, queues: t.queues, timeoutMs: 5000, now: () => now, log: silentLog });
    // Before the turn can be dead, recovery touches nothing.
    expect(await recover(new Date())).toMatchObject({ workerLost: 0 });
    expect(await statusCounts(subscription)).toEqual({ sending: 3, pending: 7 });
    const later = new Date(Date.now() + abandonedAfterMs(5000) + 1000);
    expect(await recover(later)).toMatchObject({ workerLost: 3 });
    expect(await statusCounts(subscription)).toEqual({ failed: 3, pending: 7 });
    const { rows } = await t.pool.query(
      `SELECT a.delivery_id, a.trigger, a.error_code, a.started_at = d.claimed_at AS "startedWhenClaimed"
       FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.subscription_id = $1`,
      [subscription],
    );
    expect(rows.map((r) => r.delivery_id).sort()).toEqual(claimed.map((d) => d.deliveryId).sort());
    for (const row of rows)
      expect(row).toMatchObject({ trigger: 'recovery', error_code: 'worker_lost', startedWhenClaimed: true });
    // The pending ones are older than the grace: their lane is asked for.
    expect(await laneJobs(subscription, ['waiting'])).toHaveLength(1);

    // The next turn sends the seven, and only them.
    const turn = await deliverer()({ subscriptionId: subscription, companyId: company.id });
    expect(turn.outcomes).toHaveLength(7);
    const sent = receiver.received.filter((r) => r.path === '/recovered').map((r) => r.json.event_id);
    const lostEvents = claimed.map((d) => d.eventId);
    expect(sent.filter((id) => lostEvents.includes(id))).toEqual([]);
    expect(new Set(sent).size).toBe(7);
    expect(await statusCounts(subscription)).toEqual({ failed: 3, succeeded: 7 });
    await t.queues.queue('webhooks').obliterate({ force: true });
  });

  it('asks again for the lane of deliveries whose request Redis lost', async () => {
    const company = await t.createCompany('Lost Lane Co');
    const subscription = await subscribe(company.key, '/lost-lane');
    await events(company.id, 3);
    await t.queues.queue('webhooks').obliterate({ force: true });
    await t.pool.query(
      `UPDATE webhook_deliveries SET created_at = created_at - interval '1 minute' WHERE subscription_id = $1`,
      [subscription],
    );
    const result = await recoverDeliveries({
      pool: t.pool,
      queues: t.queues,
      timeoutMs: 5000,
      now: () => new Date(),
      log: silentLog,
    });
    expect(result).toMatchObject({ workerLost: 0 });
    const [job] = await laneJobs(subscription, ['waiting']);
    expect(job?.data).toEqual({ subscriptionId: subscription, companyId: company.id });
    // Asking again while it waits adds nothing.
    await recoverDeliveries({ pool: t.pool, queues: t.queues, timeoutMs: 5000, now: () => new Date(), log: silentLog });
    expect(await laneJobs(subscription, ['waiting'])).toHaveLength(1);
    await t.queues.queue('webhooks').obliterate({ force: true });
  });
});
