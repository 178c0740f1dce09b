/**
 * Monitoring costs, in one run (issue 9):
 * - detection: the ingest path (API → inbox → ingest worker → health worker) for 1,000 simulated
 *   vehicles, with every detector on (each vehicle subscribed to all 20 kinds, its company with
 *   geofences) against the same pushes with no subscription; timed until every evaluation is
 *   written. Target: detectors on ≥ 0.7 × off.
 * - delivery: a backlog of stored monitoring events with due deliveries (1,000 subscriptions)
 *   drained by one webhooks worker process (lane jobs → claim → X-Service-Signature → SSRF-guarded
 *   POST → attempt record) to a receiver process verifying every signature, against a plain loop
 *   sending the same number of signed POSTs, 64 in flight. Target: ≥ 0.4 × the loop.
 */
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import type { Pool } from '../src/db/pool.js';
import { monitoringKinds } from '../src/domain/monitoring-kinds.js';
import { requestMonitoringLanes } from '../src/queue/enqueue-monitoring.js';
import { Queues } from '../src/queue/queues.js';
import { encryptSecret } from '../src/security/secrets.js';
import { signMonitoringBody } from '../src/delivery/sign.js';
import { benchFleet, generateBatches, pushBatch, pushConcurrency, seed } from './ingest.js';
import { createRedis } from '../src/queue/connection.js';
import {
  benchConfig,
  benchLog,
  freshDatabase,
  memoryOf,
  signedPostLoop,
  printTable,
  startService,
  type Service,
  serviceEnv,
} from './support.js';

const apiPort = 3931;
const workerPort = 3932;
const receiverPort = 3933;
const inFlight = 64;
export const secret = 'whsec_bench_monitoring_secret';
/** Before the simulated fleet's first reading (bench/ingest.ts `benchFleet`). */
const subscribedAt = '2026-11-01T00:00:00Z';

function option(args: string[], name: string, fallback: number): number {
  const flag = args.indexOf(name);
  return flag >= 0 ? Number(args[flag + 1]) : fallback;
}

/** Every vehicle of the bench company subscribed to all 20 kinds, and 20 geofences where the fleet drives. */
export async function subscribeFleet(pool: Pool, receiverUrl: string, fixes: Array<{ lat: number; lon: number }>) {
  const company = await pool.query<{ id: string }>(`SELECT id FROM companies LIMIT 1`);
  const companyId = company.rows[0]!.id;
  await pool.query(
    `INSERT INTO monitoring_subscriptions (company_id, vehicle_id, webhook_url, events, tier, options, secret_ciphertext, created_at)
     SELECT company_id, id, $2, $3, 'premium', '{"speed_limit_kph": 110, "idle_minutes": 10}', $4, $5 FROM vehicles WHERE company_id = $1`,
    [
      companyId,
      `${receiverUrl}/hooks/monitoring`,
      monitoringKinds,
      encryptSecret(benchConfig.secretsKey, secret),
      subscribedAt,
    ],
  );
  await pool.query(
    `INSERT INTO geofences (company_id, name, area)
     SELECT $1, 'Fence ' || i, jsonb_build_object('type', 'Circle', 'center', jsonb_build_object('lat', f.lat, 'lon', f.lon), 'radius_m', 500)
     FROM unnest($2::float8[], $3::float8[]) WITH ORDINALITY AS f(lat, lon, i)`,
    [companyId, fixes.map((f) => f.lat), fixes.map((f) => f.lon)],
  );
}

/** Ingest with the health worker, with or without every vehicle monitored; timed until all is written. */
/**
 * `workerHeapMiB` caps the worker's V8 old space (`--max-old-space-size`): a run that completes
 * under a small cap shows that resident memory growing with the volume is the collector's lazy
 * sizing, not data kept.
 */
async function ingestRate(readings: number, monitored: boolean, workerHeapMiB: number | null) {
  const pushSecret = 'bench-simulator-secret';
  const { url: databaseUrl, pool } = await freshDatabase(monitored ? 'monitoring_on' : 'monitoring_off');
  const { connectionId, vehicleIds } = await seed(pool, pushSecret);
  const batches = generateBatches(benchFleet(), readings, vehicleIds);
  if (monitored) {
    // Fences around some of the fleet's first fixes, so geofence edges are really tested.
    const first = JSON.parse(batches[0]!.body) as {
      readings: Array<{ signals: { location?: { lat: number; lon: number } } }>;
    };
    const fixes = first.readings.flatMap((r) => (r.signals.location ? [r.signals.location] : [])).slice(0, 20);
    await subscribeFleet(pool, `http://127.0.0.1:${receiverPort}`, fixes);
  }
  const prefix = `{benchm${Date.now()}}`;
  const env = serviceEnv(databaseUrl, prefix);
  const services: Service[] = [];
  const redis = createRedis(benchConfig, 'worker', benchLog);
  const healthQueue = new Queue('health', { connection: redis, prefix });
  try {
    services.push(await startService('server/main.js', ['api'], env, apiPort, '/readyz'));
    const workerEnv = workerHeapMiB ? { ...env, NODE_OPTIONS: `--max-old-space-size=${workerHeapMiB}` } : env;
    services.push(
      await startService('server/main.js', ['worker', 'ingest', 'health'], workerEnv, workerPort, '/readyz'),
    );
    const started = Date.now();
    let next = 0;
    // The worker's resident memory after each tenth of the pushes: flat, or growing with the volume.
    const workerPid = services[1]!.process.pid!;
    const memoryMiB: number[] = [];
    await Promise.all(
      Array.from({ length: pushConcurrency }, async () => {
        while (next < batches.length) {
          const index = next++;
          await pushBatch(services[0]!.url, connectionId, pushSecret, batches[index]!);
          if ((index + 1) % Math.ceil(batches.length / 10) === 0) memoryMiB.push(memoryOf(workerPid).rssMiB);
        }
      }),
    );
    for (;;) {
      const pending = (
        await pool.query<{ n: number }>(`SELECT count(*) AS n FROM ingest_inbox WHERE processed_at IS NULL`)
      ).rows[0]!.n;
      const counts = await healthQueue.getJobCounts('waiting', 'active', 'prioritized');
      if (Number(pending) === 0 && Object.values(counts).every((n) => n === 0)) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const seconds = (Date.now() - started) / 1000;
    const samples = Number((await pool.query<{ n: number }>(`SELECT count(*) AS n FROM readings`)).rows[0]!.n);
    const events = await pool.query<{ kind: string; n: number }>(
      `SELECT kind, count(*)::int AS n FROM monitoring_events GROUP BY kind ORDER BY n DESC`,
    );
    const { rssMiB, peakMiB } = memoryOf(workerPid);
    return {
      samples,
      seconds,
      rate: Math.round(samples / seconds),
      workerMemory: { afterEachTenthMiB: [...memoryMiB, rssMiB], peakMiB },
      eventsByKind: Object.fromEntries(events.rows.map((r) => [r.kind, r.n])),
    };
  } finally {
    await Promise.all(services.map((service) => service.stop()));
    await healthQueue.close();
    redis.disconnect();
    await pool.end();
  }
}

interface ReceiverStats {
  received: number;
  invalid: number;
  distinctEvents: number;
}

const receiverStats = async (url: string) => (await fetch(`${url}/stats`)).json() as Promise<ReceiverStats>;

/** A monitoring body as the pipeline stores it. */
function eventBody(eventId: string, subscriptionId: string, vehicleId: string): Buffer {
  const now = new Date().toISOString();
  return Buffer.from(
    JSON.stringify({
      event: 'hard_impact',
      event_id: eventId,
      subscription_id: subscriptionId,
      vehicle_id: vehicleId,
      timestamp: now,
      occurred_at: now,
      severity: 'high',
      details: {
        type: 'incident',
        description: 'Impact of 2.1 g.',
        current_mileage: 24012.5,
        last_service: null,
        estimated_cost: null,
      },
      actions: { recommended: 'Inspect the vehicle and check on the driver.', urgent: true, can_drive: false },
    }),
  );
}

/** The ceiling: `count` signed monitoring POSTs from a plain loop, `inFlight` at a time over keep-alive. */
function rawLoop(receiverUrl: string, count: number): Promise<number> {
  return signedPostLoop(`${receiverUrl}/hooks/monitoring`, count, inFlight, () => {
    const body = eventBody(randomUUID(), randomUUID(), randomUUID());
    return { body, headers: { 'x-service-signature': signMonitoringBody(secret, body) } };
  });
}

/** `count` stored events with due deliveries, spread over the subscriptions (as detection leaves them). */
async function seedBacklog(pool: Pool, count: number): Promise<Array<{ subscriptionId: string; companyId: string }>> {
  const subscriptions = await pool.query<{ id: string; companyId: string; vehicleId: string }>(
    `SELECT id, company_id AS "companyId", vehicle_id AS "vehicleId" FROM monitoring_subscriptions ORDER BY id`,
  );
  const rows = Array.from({ length: count }, (_, i) => {
    const s = subscriptions.rows[i % subscriptions.rows.length]!;
    const id = randomUUID();
    return { id, s, body: eventBody(id, s.id, s.vehicleId).toString('utf8') };
  });
  for (let i = 0; i < rows.length; i += 5000) {
    const slice = rows.slice(i, i + 5000);
    await pool.query(
      `WITH e AS (
         INSERT INTO monitoring_events (id, subscription_id, company_id, vehicle_id, kind, episode_key, severity, occurred_at, detected_at, body)
         SELECT id, sub, company, vehicle, 'hard_impact', '', 'high', now(), now(), body
         FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::text[]) AS r(id, sub, company, vehicle, body)
         RETURNING id, subscription_id, company_id
       )
       INSERT INTO monitoring_deliveries (event_id, subscription_id, company_id, next_attempt_at) SELECT id, subscription_id, company_id, now() FROM e`,
      [
        slice.map((r) => r.id),
        slice.map((r) => r.s.id),
        slice.map((r) => r.s.companyId),
        slice.map((r) => r.s.vehicleId),
        slice.map((r) => r.body),
      ],
    );
  }
  return subscriptions.rows.map((s) => ({ subscriptionId: s.id, companyId: s.companyId }));
}

async function deliveryRates(events: number) {
  const { url: databaseUrl, pool } = await freshDatabase('monitoring_delivery');
  const prefix = `{benchmd${Date.now()}}`;
  const redis = createRedis(benchConfig, 'worker', benchLog);
  const queues = new Queues(redis, prefix);
  const services: Service[] = [];
  try {
    const receiver = await startService(
      'bench/webhook-receiver.js',
      [String(receiverPort), secret, 'monitoring'],
      {},
      receiverPort,
      '/stats',
    );
    services.push(receiver);
    await seed(pool, 'unused');
    await subscribeFleet(pool, receiver.url, []);

    console.log(`sending ${events.toLocaleString()} signed monitoring POSTs from a plain loop…`);
    const rawSeconds = await rawLoop(receiver.url, events);
    const raw = await receiverStats(receiver.url);
    if (raw.received !== events || raw.invalid !== 0)
      throw new Error(`raw loop: ${raw.received} received, ${raw.invalid} invalid`);
    await fetch(`${receiver.url}/reset`, { method: 'POST' });

    console.log(`storing ${events.toLocaleString()} monitoring events with due deliveries…`);
    const lanes = await seedBacklog(pool, events);
    const env = serviceEnv(databaseUrl, prefix, { WEBHOOK_ALLOW_NETS: '127.0.0.1/32' });
    const webhooksQueue = queues.queue('webhooks');
    await webhooksQueue.pause();
    services.push(await startService('server/main.js', ['worker', 'webhooks'], env, workerPort, '/readyz'));
    // What the health worker does after detection commits: ask for each subscription's lane.
    await requestMonitoringLanes(queues, lanes);
    console.log(`delivering them through lanes, queue and worker…`);
    const started = Date.now();
    await webhooksQueue.resume();
    let stats = await receiverStats(receiver.url);
    while (stats.received < events) {
      if (Date.now() - started > 300_000) throw new Error(`only ${stats.received} of ${events} delivered`);
      await new Promise((resolve) => setTimeout(resolve, 50));
      stats = await receiverStats(receiver.url);
    }
    const pipelineSeconds = (Date.now() - started) / 1000;
    while ((await pool.query(`SELECT 1 FROM monitoring_deliveries WHERE status <> 'succeeded' LIMIT 1`)).rowCount) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return {
      events,
      rawSeconds,
      rawRate: Math.round(events / rawSeconds),
      pipelineSeconds,
      pipelineRate: Math.round(events / pipelineSeconds),
      verifiedOnce: stats.invalid === 0 && stats.distinctEvents === events && stats.received === events,
    };
  } finally {
    await Promise.all(services.map((service) => service.stop()));
    await queues.close();
    await redis.quit();
    await pool.end();
  }
}

export async function benchMonitoring(args: string[]): Promise<Record<string, unknown>> {
  const readings = option(args, '--readings', 150_000);
  const events = option(args, '--events', 20_000);
  const heapFlag = args.indexOf('--worker-heap-mb');
  const workerHeapMiB = heapFlag >= 0 ? Number(args[heapFlag + 1]) : null;
  if (workerHeapMiB) console.log(`ingest + health worker old space capped at ${workerHeapMiB} MiB`);
  const off = await ingestRate(readings, false, workerHeapMiB);
  const on = await ingestRate(readings, true, workerHeapMiB);
  const detectionRatio = on.rate / off.rate;
  const delivery = await deliveryRates(events);
  const deliveryRatio = delivery.pipelineRate / delivery.rawRate;

  printTable(`Ingestion of ${readings.toLocaleString()} samples, 1,000 vehicles, until every evaluation is written`, [
    {
      path: 'ingest + health, no subscription (detectors off)',
      'samples/s': off.rate,
      seconds: off.seconds.toFixed(1),
    },
    {
      path: 'ingest + health + all 20 detectors per vehicle',
      'samples/s': on.rate,
      seconds: on.seconds.toFixed(1),
    },
  ]);
  console.log(
    `ratio on / off: ${detectionRatio.toFixed(3)} (target ≥ 0.7: ${detectionRatio >= 0.7 ? 'met' : 'missed'})`,
  );
  const memory = (run: typeof on) =>
    `${run.workerMemory.afterEachTenthMiB[0]} → ${run.workerMemory.afterEachTenthMiB.at(-1)} MiB (peak ${run.workerMemory.peakMiB})`;
  console.log(
    `worker memory from the first tenth of the pushes to the end (${(readings / 10).toLocaleString()} → ${readings.toLocaleString()} samples): off ${memory(off)}, on ${memory(on)}`,
  );
  console.log(
    `events detected: ${
      Object.entries(on.eventsByKind)
        .map(([k, n]) => `${k} ${n}`)
        .join(', ') || 'none'
    }`,
  );
  printTable(
    `Monitoring delivery, ${events.toLocaleString()} events, one receiver on 127.0.0.1 verifying every signature`,
    [
      {
        path: 'raw signed POST loop (64 in flight)',
        'deliveries/s': delivery.rawRate,
        seconds: delivery.rawSeconds.toFixed(1),
      },
      {
        path: 'stored events → lanes → queue → worker → receiver',
        'deliveries/s': delivery.pipelineRate,
        seconds: delivery.pipelineSeconds.toFixed(1),
      },
    ],
  );
  console.log(
    `ratio pipeline / raw loop: ${deliveryRatio.toFixed(3)} (target ≥ 0.4: ${deliveryRatio >= 0.4 ? 'met' : 'missed'})`,
  );
  console.log(`every delivery verified, each event once: ${delivery.verifiedOnce ? 'yes' : 'no'}`);
  return {
    detection: { readings, off, on, ratio: detectionRatio, target: detectionRatio >= 0.7 ? 'met' : 'missed' },
    delivery: { ...delivery, ratio: deliveryRatio, target: deliveryRatio >= 0.4 ? 'met' : 'missed' },
  };
}
