/**
 * Core webhook delivery beside its ceiling, in one run, to one local receiver process that
 * verifies every signature:
 * - the ceiling: a plain loop sending the same number of signed POSTs (envelope built and signed
 *   per request, 64 in flight over keep-alive, as many as the webhooks worker runs);
 * - the real path, draining a backlog of committed outbox events: relay → BullMQ delivery jobs →
 *   one webhooks worker process → claim, sign, SSRF-guarded POST, attempt record; with
 *   `--workers M` (M > 1) the same backlog again with M worker processes, each one's delivered count
 *   from its /metrics (no API is in this path: events are written by run changes' transactions);
 * - latency: events written at half the measured rate, each transaction followed by the relay
 *   request a run change makes; event row written → receiver has it.
 * Prints deliveries/s for each, the ratios, CPU per delivery by process and the latency p50/p99.
 * Target (issue 12): ratio ≥ 0.4.
 */
import { randomUUID } from 'node:crypto';
import { withTransaction, type Pool } from '../src/db/pool.js';
import { insertSubscription, insertWebhookEvents } from '../src/db/webhooks.js';
import { insertVehicle } from '../src/db/vehicles.js';
import { runEventKinds } from '../src/domain/run.js';
import { Queues } from '../src/queue/queues.js';
import { submitServiceRequest } from '../src/runs/service-requests.js';
import { encryptSecret } from '../src/security/secrets.js';
import { webhookRunOf } from '../src/webhooks/outbox.js';
import { requestRelay } from '../src/queue/enqueue-webhooks.js';
import { signCoreBody } from '../src/delivery/sign.js';
import { webhookEnvelopeBytes, type WebhookRun } from '../src/webhooks/webhook-run.js';
import { createRedis } from '../src/queue/connection.js';
import {
  benchConfig,
  benchLog,
  freshDatabase,
  signedPostLoop,
  printTable,
  startCpuMeter,
  cpuMicrosPer,
  startService,
  startServices,
  metricSum,
  type Service,
  serviceEnv,
} from './support.js';

const receiverPort = 3921;
const workerPort = 3922;
const inFlight = 64;
const eventsPerTransaction = 1000;
export const secret = 'whsec_bench_signing_secret';

interface ReceiverStats {
  received: number;
  invalid: number;
  connections: number;
  distinctEvents: number;
  p50Ms: number;
  p99Ms: number;
}

async function receiverStats(url: string): Promise<ReceiverStats> {
  return (await fetch(`${url}/stats`)).json() as Promise<ReceiverStats>;
}

async function waitForDeliveries(url: string, expected: number, timeoutMs: number): Promise<ReceiverStats> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const stats = await receiverStats(url);
    if (stats.received >= expected) return stats;
    if (Date.now() > deadline)
      throw new Error(`only ${stats.received} of ${expected} deliveries arrived in ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A subscribed company: its run's webhook payload goes with each of its events. */
export interface Subscriber {
  companyId: string;
  payload: WebhookRun;
}

/** A company with one vehicle (home yard), one real run and a subscription to every run event. */
export async function seedSubscriber(pool: Pool, receiverUrl: string, index: number): Promise<Subscriber> {
  return withTransaction(pool, async (tx) => {
    const company = await tx.query<{ id: string }>(
      `INSERT INTO companies (name, external_ids) VALUES ($1, jsonb_build_object('shopmonkey', $2::text)) RETURNING id`,
      [`Webhook Bench ${index}`, `cus_${index}`],
    );
    const companyId = company.rows[0]!.id;
    const vehicle = await insertVehicle(tx, companyId, {
      name: 'Van 7',
      vin: '1FTBW3XM6HKA00007',
      licensePlate: 'BENCH-7',
      make: 'Ford',
      model: 'Transit',
      year: 2022,
      telematicsProvider: null,
      providerVehicleId: null,
      providerConnectionId: null,
      homeLocationId: null,
      linkBroken: null,
    });
    const { runId } = await submitServiceRequest(tx, companyId, {
      vehicleId: vehicle.id,
      title: 'Brake inspection',
      description: 'Squeal from the front axle',
      preferredStart: null,
      preferredEnd: null,
      items: [{ title: 'Brake inspection', description: null, type: 'brake_inspection' }],
      customer: { name: 'Ana Lopez', email: 'ana@example.com', phone: null, address: null, display_address: null },
      location: {
        name: 'North yard',
        street1: '9 Depot Rd',
        street2: null,
        city: 'Joliet',
        state: 'IL',
        postalCode: '60431',
        country: 'US',
        displayAddress: null,
        latitude: 41.53,
        longitude: -88.09,
      },
    });
    // The seed's own run.created is not part of the measurement.
    await tx.query(`DELETE FROM webhook_relay_queue`);
    await insertSubscription(tx, {
      companyId,
      url: `${receiverUrl}/hooks/fleet`,
      events: [...runEventKinds],
      secretCiphertext: encryptSecret(benchConfig.secretsKey, secret),
    });
    return { companyId, payload: await webhookRunOf(tx, companyId, runId) };
  });
}

/** The ceiling: `count` signed POSTs from a plain loop, `inFlight` at a time over keep-alive. */
function rawLoop(receiverUrl: string, payload: WebhookRun, count: number): Promise<number> {
  const dataJson = JSON.stringify(payload);
  return signedPostLoop(`${receiverUrl}/hooks/fleet`, count, inFlight, () => {
    const body = webhookEnvelopeBytes('run.completed', randomUUID(), new Date(), dataJson);
    return { body, headers: { 'service-signature': signCoreBody(secret, body, Math.floor(Date.now() / 1000)) } };
  });
}

/**
 * One transaction of `size` outbox events, spread round-robin over the subscribers (one delivery
 * lane each), then the relay request a committed run change makes.
 */
export async function writeEventBatch(
  pool: Pool,
  queues: Queues,
  subscribers: readonly Subscriber[],
  size: number,
  firstIndex: number,
): Promise<void> {
  const events = Array.from({ length: size }, (_, i) => {
    const { companyId, payload } = subscribers[(firstIndex + i) % subscribers.length]!;
    return {
      companyId,
      runId: payload.id,
      kind: runEventKinds[(firstIndex + i) % runEventKinds.length]!,
      payload,
      subscriptionId: null,
    };
  });
  await withTransaction(pool, (tx) => insertWebhookEvents(tx, events));
  await requestRelay(queues);
}

interface DrainResult {
  workers: number;
  seconds: number;
  rate: number;
  outboxEventsPerSecond: number;
  cpuMicrosPerDelivery: Record<string, number>;
  connections: number;
  deliveredPerWorker: number[];
  byStatus: Record<string, number>;
  eachEventOnce: boolean;
}

/**
 * The real path from a backlog, with `workers` webhooks worker processes: the events are committed
 * to the outbox while the queue is paused (each transaction followed by its relay request, as a
 * run change does), then the clock starts and the queue resumes: relay → delivery jobs → workers →
 * receiver. Answers the running workers too, for a following phase.
 */
async function drainBacklog(
  context: { pool: Pool; queues: Queues; receiverUrl: string; receiverPid: number; env: Record<string, string> },
  subscribers: readonly Subscriber[],
  count: number,
  workerCount: number,
): Promise<{ result: DrainResult; workers: Service[] }> {
  const { pool, queues, receiverUrl, receiverPid, env } = context;
  await fetch(`${receiverUrl}/reset`, { method: 'POST' });
  const phaseStart = (await pool.query<{ now: Date }>(`SELECT now()`)).rows[0]!.now;
  const workers = await startServices(workerCount, 'server/main.js', ['worker', 'webhooks'], env, workerPort);
  const webhooksQueue = queues.queue('webhooks');
  await webhooksQueue.pause();
  console.log(`writing ${count.toLocaleString()} events to the outbox (${workerCount} worker process(es) next)…`);
  const writeStarted = Date.now();
  for (let written = 0; written < count; written += eventsPerTransaction) {
    await writeEventBatch(pool, queues, subscribers, Math.min(eventsPerTransaction, count - written), written);
  }
  const outboxEventsPerSecond = Math.round(count / ((Date.now() - writeStarted) / 1000));
  const started = Date.now();
  const meter = await startCpuMeter(pool, {
    ...Object.fromEntries(workers.map((w, i) => [workers.length > 1 ? `worker ${i + 1}` : 'worker', w.process.pid!])),
    receiver: receiverPid,
  });
  await webhooksQueue.resume();
  const drained = await waitForDeliveries(receiverUrl, count, 600_000);
  const cpuSeconds = await meter();
  const seconds = (Date.now() - started) / 1000;
  // The receiver can have a delivery a moment before its job records the attempt.
  while (
    (await pool.query(`SELECT 1 FROM webhook_deliveries WHERE status IN ('pending', 'sending') LIMIT 1`)).rowCount
  ) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const settled = await pool.query<{ status: string; n: number }>(
    `SELECT status, count(*)::int AS n FROM webhook_deliveries WHERE created_at >= $1 GROUP BY status`,
    [phaseStart],
  );
  const deliveredPerWorker = await Promise.all(
    workers.map((w) => metricSum(w.url, 'webhook_deliveries_total', { kind: 'core', outcome: 'succeeded' })),
  );
  return {
    workers,
    result: {
      workers: workerCount,
      seconds,
      rate: Math.round(count / seconds),
      outboxEventsPerSecond,
      cpuMicrosPerDelivery: cpuMicrosPer(cpuSeconds, count),
      connections: drained.connections,
      deliveredPerWorker,
      byStatus: Object.fromEntries(settled.rows.map((r) => [r.status, r.n])),
      eachEventOnce: drained.invalid === 0 && drained.distinctEvents === count && drained.received === count,
    },
  };
}

export async function benchWebhooks(args: string[]): Promise<Record<string, unknown>> {
  const option = (name: string, fallback: number) => {
    const flag = args.indexOf(name);
    return flag >= 0 ? Number(args[flag + 1]) : fallback;
  };
  const count = option('--events', 100_000);
  // Scale-out: with M > 1, the backlog is drained by one worker process and then by M, in this run.
  const workerCounts = [...new Set([1, option('--workers', 1)])];
  // Delivery lanes are per subscription (one worker sends a lane's turn): several subscriptions
  // give several workers work at once.
  const subscriptionCount = option('--subscriptions', 1);
  const { url: databaseUrl, pool } = await freshDatabase('webhooks');
  const prefix = `{bench${Date.now()}}`;
  const redis = createRedis(benchConfig, 'worker', benchLog);
  const queues = new Queues(redis, prefix);
  const services: Service[] = [];
  try {
    const receiver = await startService(
      'bench/webhook-receiver.js',
      [String(receiverPort), secret],
      {},
      receiverPort,
      '/stats',
    );
    services.push(receiver);
    const subscribers: Subscriber[] = [];
    for (let i = 1; i <= subscriptionCount; i++) subscribers.push(await seedSubscriber(pool, receiver.url, i));

    // 1. The ceiling: the plain signed-POST loop.
    console.log(`sending ${count.toLocaleString()} signed POSTs from a plain loop…`);
    const rawMeter = await startCpuMeter(pool, { receiver: receiver.process.pid! });
    const rawSeconds = await rawLoop(receiver.url, subscribers[0]!.payload, count);
    const rawCpu = await rawMeter();
    const raw = await receiverStats(receiver.url);
    if (raw.received !== count || raw.invalid !== 0)
      throw new Error(`raw loop: ${raw.received} received, ${raw.invalid} invalid`);
    const rawRate = Math.round(count / rawSeconds);

    // 2. The real path from a backlog, with one worker process and then with M.
    const env = serviceEnv(databaseUrl, prefix, { WEBHOOK_ALLOW_NETS: '127.0.0.1/32' });
    const context = { pool, queues, receiverUrl: receiver.url, receiverPid: receiver.process.pid!, env };
    const drains: DrainResult[] = [];
    let workers: Service[] = [];
    for (const workerCount of workerCounts) {
      await Promise.all(workers.map((w) => w.stop()));
      const phase = await drainBacklog(context, subscribers, count, workerCount);
      workers = phase.workers;
      services.push(...workers);
      drains.push(phase.result);
    }
    const single = drains[0]!;
    const last = drains.at(-1)!;

    // 3. Latency, with the last phase's workers: events written at half its rate for 10 s, in 20
    //    small transactions a second.
    await fetch(`${receiver.url}/reset`, { method: 'POST' });
    const pacedCount = Math.round(last.rate * 0.5 * 10);
    const perTick = Math.max(1, Math.round(pacedCount / 200));
    const pacedStart = Date.now();
    for (let tick = 0; tick * perTick < pacedCount; tick++) {
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, pacedStart + tick * 50 - Date.now())));
      await writeEventBatch(pool, queues, subscribers, Math.min(perTick, pacedCount - tick * perTick), tick * perTick);
    }
    const paced = await waitForDeliveries(receiver.url, pacedCount, 120_000);

    const ratio = single.rate / rawRate;
    printTable(
      `Core webhook delivery, ${count.toLocaleString()} events to ${subscriptionCount} subscription(s), one receiver on 127.0.0.1 verifying every signature`,
      [
        {
          path: 'raw signed POST loop (64 in flight)',
          'deliveries/s': rawRate,
          'of raw': '1.000',
          seconds: rawSeconds.toFixed(1),
          connections: raw.connections,
          'delivered per worker': '',
        },
        ...drains.map((d) => ({
          path: `outbox → relay → queue → ${d.workers} worker process${d.workers > 1 ? 'es' : ''} → receiver`,
          'deliveries/s': d.rate,
          'of raw': (d.rate / rawRate).toFixed(3),
          seconds: d.seconds.toFixed(1),
          connections: d.connections,
          'delivered per worker': d.deliveredPerWorker.join(', '),
        })),
      ],
    );
    console.log(
      `ratio pipeline (1 worker) / raw loop: ${ratio.toFixed(3)} (target ≥ 0.4: ${ratio >= 0.4 ? 'met' : 'missed'})`,
    );
    if (drains.length > 1)
      console.log(`${last.workers} worker processes / 1, same run: ${(last.rate / single.rate).toFixed(2)}×`);
    console.log(
      `outbox writes before the clock: ${single.outboxEventsPerSecond.toLocaleString()} events/s in transactions of ${eventsPerTransaction}`,
    );
    const cpuLine = (micros: Record<string, number>) =>
      Object.entries(micros)
        .filter(([, n]) => n > 0)
        .map(([name, n]) => `${name} ${n}`)
        .join(', ');
    console.log(`CPU µs per delivery, raw loop: ${cpuLine(cpuMicrosPer(rawCpu, count))}`);
    for (const d of drains)
      console.log(`CPU µs per delivery, ${d.workers} worker(s): ${cpuLine(d.cpuMicrosPerDelivery)}`);
    for (const d of drains) {
      console.log(
        `${d.workers} worker(s): deliveries by status ${Object.entries(d.byStatus)
          .map(([status, n]) => `${status} ${n}`)
          .join(', ')}; every delivery verified, each event once: ${d.eachEventOnce ? 'yes' : 'NO'}`,
      );
    }
    console.log(
      `event-to-delivery latency at 50 % of max rate (${last.workers} worker(s), ${pacedCount.toLocaleString()} events over 10 s): p50 ${paced.p50Ms} ms, p99 ${paced.p99Ms} ms`,
    );
    return {
      events: count,
      subscriptions: subscriptionCount,
      rawDeliveriesPerSecond: rawRate,
      pipelineDeliveriesPerSecond: single.rate,
      ratio,
      cpuMicrosPerDelivery: { rawLoop: cpuMicrosPer(rawCpu, count), pipeline: single.cpuMicrosPerDelivery },
      byWorkerCount: drains,
      latencyMs: { atHalfRate: { workers: last.workers, p50: paced.p50Ms, p99: paced.p99Ms } },
      target: ratio >= 0.4 ? 'met' : 'missed',
    };
  } finally {
    await Promise.all(services.map((service) => service.stop()));
    await queues.close();
    await redis.quit();
    await pool.end();
  }
}
