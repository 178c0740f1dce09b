/**
 * No core delivery lost to a crash: a real webhooks worker process
 * (`node dist/server/main.js worker webhooks`, built by `npm test` before vitest runs) is killed with
 * SIGKILL while its sends wait on a slow receiver on 127.0.0.1. Counted: requests the receiver
 * got, attempts recorded, worker_lost, and deliveries sent again afterwards.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/db/pool.js';
import { insertWebhookEvents } from '../../src/db/webhooks.js';
import { abandonedAfterMs, laneTurnMs } from '../../src/delivery/lane-timing.js';
import { laneWidth } from '../../src/webhooks/deliver-core.js';
import { requestRelay } from '../../src/queue/enqueue-webhooks.js';
import { recoverDeliveries } from '../../src/webhooks/recover.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ProcessGroup, serviceEnv, type ServiceProcess } from '../helpers/processes.js';

const timeoutMs = 30_000;
const eventCount = 800;
/** The receiver answers this many at once (the lane opens up on them), then holds every answer (until `healthy`). */
const answeredAtOnce = 300;

let t: TestApp;
let server: Server;
let receiverUrl: string;
/** event_id of every request, in arrival order. */
const arrived: string[] = [];
const holding: ServerResponse[] = [];
let healthy = false;
const processes = new ProcessGroup();

function startWorkerProcess(): Promise<ServiceProcess> {
  return processes.start(
    ['worker', 'webhooks'],
    serviceEnv(t, { WEBHOOK_ALLOW_NETS: '127.0.0.1/32', WEBHOOK_TIMEOUT_MS: String(timeoutMs) }),
  );
}

beforeAll(async () => {
  t = await createTestApp({ WEBHOOK_ALLOW_NETS: '127.0.0.1/32', WEBHOOK_TIMEOUT_MS: String(timeoutMs) });
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      arrived.push(JSON.parse(Buffer.concat(chunks).toString('utf8')).event_id);
      if (healthy || arrived.length <= answeredAtOnce) res.writeHead(204).end();
      else holding.push(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  await processes.killAll();
  server.closeAllConnections();
  server.close();
  await t.close();
});

async function count(sql: string, values: unknown[]): Promise<number> {
  return (await t.pool.query<{ n: number }>(sql, values)).rows[0]!.n;
}

describe('a delivery worker killed with SIGKILL mid-turn', () => {
  it('never fails a delivery it did not send: only started sends can be worker_lost, the rest are delivered once', async () => {
    const company = await t.createCompany('Crash Co');
    const subscription = (
      await t.api('POST', '/webhook-subscriptions', company.key, {
        url: `${receiverUrl}/crash`,
        events: ['run.created'],
      })
    ).json().data.id as string;
    await withTransaction(t.pool, (tx) =>
      insertWebhookEvents(
        tx,
        Array.from({ length: eventCount }, (_, i) => ({
          companyId: company.id,
          runId: null,
          kind: 'run.created',
          payload: { id: randomUUID(), title: `run ${i}` },
          subscriptionId: null,
        })),
      ),
    );
    const first = await startWorkerProcess();
    await requestRelay(t.queues);
    // The lane opens up on the quick answers, then every request hangs; once the turn's time is
    // over it starts no more, and what hangs stays as it is.
    await expect.poll(() => holding.length, { timeout: 30_000, interval: 100 }).toBeGreaterThan(0);
    for (let seen = -1; seen !== holding.length;) {
      seen = holding.length;
      await new Promise((resolve) => setTimeout(resolve, laneTurnMs + 500));
    }
    expect(holding.length).toBeLessThanOrEqual(laneWidth);
    // A lane claims a delivery only as its send starts.
    const started = () =>
      count(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE subscription_id = $1 AND claimed_at IS NOT NULL`, [
        subscription,
      ]);
    expect(await started()).toBe(answeredAtOnce + holding.length);

    await first.kill();
    const sentBeforeCrash = new Set(arrived);
    expect(sentBeforeCrash.size).toBe(answeredAtOnce + holding.length);
    expect(await started()).toBe(sentBeforeCrash.size);
    const stateOf = async (status: string) =>
      count(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE subscription_id = $1 AND status = $2`, [
        subscription,
        status,
      ]);
    const recordedBeforeCrash = await stateOf('succeeded');
    const startedUnrecorded = await stateOf('sending');
    const neverSent = await stateOf('pending');
    expect(recordedBeforeCrash + startedUnrecorded).toBe(sentBeforeCrash.size);
    expect(neverSent).toBe(eventCount - sentBeforeCrash.size);

    // The sweep as it runs once the dead worker's claims are old enough.
    const recovered = await recoverDeliveries({
      pool: t.pool,
      queues: t.queues,
      timeoutMs,
      now: () => new Date(Date.now() + abandonedAfterMs(timeoutMs) + 1000),
      log: { warn: () => undefined },
    });
    expect(recovered).toMatchObject({ workerLost: startedUnrecorded });
    expect(await stateOf('pending')).toBe(neverSent);
    const lost = await t.pool.query<{ eventId: string }>(
      `SELECT d.event_id AS "eventId" FROM webhook_deliveries d JOIN webhook_attempts a ON a.delivery_id = d.id
       WHERE d.subscription_id = $1 AND d.status = 'failed' AND a.error_code = 'worker_lost'`,
      [subscription],
    );
    const lostEvents = lost.rows.map((r) => r.eventId);
    // Every worker_lost delivery reached the receiver; the held ones are among them.
    expect(lostEvents).toHaveLength(startedUnrecorded);
    expect(lostEvents.filter((id) => !sentBeforeCrash.has(id))).toEqual([]);
    expect(lostEvents).toEqual(expect.arrayContaining(arrived.slice(answeredAtOnce)));

    // A healthy receiver and a new worker: everything else is delivered.
    healthy = true;
    await startWorkerProcess();
    const settled = () =>
      count(
        `SELECT count(*)::int AS n FROM webhook_deliveries WHERE subscription_id = $1 AND status IN ('succeeded', 'failed')`,
        [subscription],
      );
    await expect.poll(settled, { timeout: 150_000, interval: 500 }).toBe(eventCount);

    const redelivered = arrived.slice(sentBeforeCrash.size);
    expect({
      sent: arrived.length,
      distinct: new Set(arrived).size,
      redelivered: redelivered.length,
      sentTwice: redelivered.filter((id) => sentBeforeCrash.has(id)).length,
    }).toEqual({
      sent: eventCount,
      distinct: eventCount,
      redelivered: eventCount - sentBeforeCrash.size,
      sentTwice: 0,
    });
    const { rows } = await t.pool.query<{ status: string; error: string | null; n: number }>(
      `SELECT d.status, a.error_code AS error, count(*)::int AS n
       FROM webhook_deliveries d JOIN webhook_attempts a ON a.delivery_id = d.id
       WHERE d.subscription_id = $1 GROUP BY 1, 2 ORDER BY 1`,
      [subscription],
    );
    expect(rows).toEqual([
      { status: 'failed', error: 'worker_lost', n: startedUnrecorded },
      { status: 'succeeded', error: null, n: eventCount - startedUnrecorded },
    ]);
    console.log(
      `crash: ${sentBeforeCrash.size} sent before the kill (${recordedBeforeCrash} recorded, ${startedUnrecorded} worker_lost), ` +
        `${neverSent} never sent and still pending, ${redelivered.length} delivered after, none twice`,
    );
  }, 240_000);
});
