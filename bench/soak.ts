/**
 * Mixed load held for N minutes (`npm run bench -- soak [--minutes N] [--ingest-rate N] [--single-api]`),
 * every part a separate process on one Postgres and one Redis:
 * - an ingest-role API taking the pushes (`API_ROLE=ingest`) and a read-role API serving reads
 *   (`API_ROLE=read`); with `--single-api`, one all-role API takes both, to measure what the split buys;
 * - `worker ingest`, `worker health` (with monitoring detection: every vehicle subscribed to all
 *   kinds, geofences where the fleet drives) and `worker webhooks` (core and monitoring delivery);
 * - a bare Fastify + pg by-id route (bench/bare-pg-server.ts), the ceiling of the read API;
 * - two receivers verifying every signature (bench/webhook-receiver.ts), core and monitoring;
 * - the load driver (bench/soak-driver.ts): pushes at half the ingest capacity measured first
 *   (or `--ingest-rate` readings/s) and push-to-visible probes through the read API.
 * The bench itself writes core run events at a steady rate (as run changes do) and drives the read
 * API's by-id at 50 connections, alternated with the bare route under the same load every 15 s.
 * Per minute it prints by-id req/s and p99 of both and their ratio, push-to-visible p99, queue
 * depths, deliveries, the RSS of every process and errors; at the end the targets (issue 20):
 * by-id ≥ 0.9 × bare, push-to-visible p99 < 1 s, no per-minute series trending upward (test/helpers/trend.ts),
 * zero errors. A missed target is reported, not an exit code: the bench fails only when it crashes
 * or a process under test dies.
 */
import pg from 'pg';
import type { Pool } from '../src/db/pool.js';
import { autovacuumOn } from '../src/db/server-settings.js';
import { createRedis } from '../src/queue/connection.js';
import { Queues } from '../src/queue/queues.js';
import type { QueueName } from '../src/queue/catalog.js';
import { byIdLoad } from './api.js';
import { benchFleet, generateBatches, pushBatch, pushConcurrency, seed } from './ingest.js';
import { secret as monitoringSecret, subscribeFleet } from './monitoring.js';
import type { DriverOptions, DriverStats } from './soak-driver.js';
import { fitTrend, type Trend, type TrendThresholds } from '../test/helpers/trend.js';
import { secret as coreSecret, seedSubscriber, writeEventBatch, type Subscriber } from './webhooks.js';
import {
  benchConfig,
  benchLog,
  createBenchApiKey,
  freshDatabase,
  load,
  memoryOf,
  metricSum,
  percentile,
  printTable,
  serviceEnv,
  startService,
  stopAllServices,
  type LoadResult,
  type Service,
} from './support.js';

const ports = {
  coreReceiver: 3961,
  monitoringReceiver: 3962,
  ingestWorker: 3963,
  healthWorker: 3964,
  webhooksWorker: 3965,
  readApi: 3966,
  ingestApi: 3967,
  bare: 3968,
  driver: 3969,
};
const connections = 50;
/** Each minute: product, bare, product, bare (bare first in even minutes), this long each. */
const windowSeconds = 15;
/** How often every process's RSS is sampled for the minute's mean and peak. */
const rssSampleMs = 5000;
const capacityReadings = 200_000;
const coreEventsPerSecond = 20;
const coreSubscribers = 4;
const probeVehicles = 2;
const pushSecret = 'bench-simulator-secret';
/** The driver's fleet starts a day after the capacity phase's (bench/ingest.ts benchFleet), so no reading repeats one. */
const soakFleetStart = '2026-11-03T06:00:00Z';
const monitoredQueues: QueueName[] = ['ingest', 'health', 'webhooks'];

/** What rises in a series only counts as a trend past these (test/helpers/trend.ts). */
const thresholds: Record<'latency' | 'visible' | 'depth' | 'rss', TrendThresholds> = {
  latency: { relativeRise: 0.2, minRise: 5 },
  visible: { relativeRise: 0.2, minRise: 50 },
  depth: { relativeRise: 0.2, minRise: 100 },
  rss: { relativeRise: 0.1, minRise: 20 },
};

interface Minute {
  minute: number;
  product: { rps: number; p99Ms: number };
  bare: { rps: number; p99Ms: number };
  ratio: number;
  visibleP99Ms: number;
  visibleSamples: number;
  /** Probes whose value was not visible within the driver's timeout (counted as samples of that long). */
  visibleTimeouts: number;
  pushedReadingsPerSecond: number;
  behindReadings: number;
  inboxPending: number;
  queueDepths: Record<string, number>;
  coreDelivered: number;
  monitoringDelivered: number;
  /** The mean of the minute's samples (every `rssSampleMs`): one sample a minute caught a GC sawtooth at a random phase. */
  rssMiB: Record<string, number>;
  /** The highest of the minute's samples, so transients stay visible. */
  rssPeakMiB: Record<string, number>;
  errors: number;
}

/**
 * Every process's RSS every `rssSampleMs`; `minute()` answers the mean and the highest sample of
 * each since the previous call and starts the next minute.
 */
function sampleRss(read: () => Array<{ name: string; rssMiB: number }>) {
  let samples: Array<Array<{ name: string; rssMiB: number }>> = [];
  const take = () => {
    // A process that exited has no /proc entry: the minute's liveness check reports it.
    try {
      samples.push(read());
    } catch {
      /* no sample this time */
    }
  };
  take();
  const timer = setInterval(take, rssSampleMs);
  return {
    minute(): { meanMiB: Record<string, number>; peakMiB: Record<string, number> } {
      take();
      const meanMiB: Record<string, number> = {};
      const peakMiB: Record<string, number> = {};
      for (const { name } of samples[0] ?? []) {
        const values = samples.map((sample) => sample.find((s) => s.name === name)?.rssMiB ?? 0);
        meanMiB[name] = Math.round(values.reduce((sum, v) => sum + v, 0) / values.length);
        peakMiB[name] = Math.round(Math.max(...values));
      }
      samples = [];
      return { meanMiB, peakMiB };
    },
    stop: () => clearInterval(timer),
  };
}

function option(args: string[], name: string, fallback: number): number {
  const flag = args.indexOf(name);
  return flag >= 0 ? Number(args[flag + 1]) : fallback;
}

async function inboxPending(pool: Pool): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ingest_inbox WHERE processed_at IS NULL AND parked_at IS NULL`,
  );
  return rows[0]!.n;
}

/** Readings/s end to end: a burst of pushes, timed until the ingest worker has processed all of them. */
async function measureCapacity(pool: Pool, pushUrl: string, connectionId: string, vehicleIds: string[]) {
  const batches = generateBatches(benchFleet(), capacityReadings, vehicleIds);
  const samples = batches.reduce((sum, batch) => sum + batch.samples, 0);
  let next = 0;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: pushConcurrency }, async () => {
      while (next < batches.length) await pushBatch(pushUrl, connectionId, pushSecret, batches[next++]!);
    }),
  );
  while ((await inboxPending(pool)) > 0) await new Promise((resolve) => setTimeout(resolve, 50));
  return Math.round(samples / ((Date.now() - started) / 1000));
}

/**
 * Autovacuum on for the soak, as on any production Postgres. A server that has it off (this
 * workplace's CI Postgres does, for test speed) keeps every dead row version: under the soak's
 * ingest the 1,000-row `vehicles` table grew to 633 MB in 11 minutes, past shared_buffers, and each
 * lookup of a vehicle walked ~400 dead index entries, so every figure drifted with the bloat, not
 * with the product. Answers how to put the server back afterwards (null: nothing was changed).
 */
async function turnAutovacuumOn(pool: Pool): Promise<(() => Promise<void>) | null> {
  if (await autovacuumOn(pool)) return null;
  try {
    // What postgresql.auto.conf held, so that exactly that is restored (usually nothing).
    const { rows: before } = await pool.query<{ setting: string }>(
      `SELECT setting FROM pg_file_settings WHERE name = 'autovacuum' AND sourcefile LIKE '%postgresql.auto.conf'`,
    );
    const previous = before[0]?.setting ?? null;
    await pool.query('ALTER SYSTEM SET autovacuum = on');
    await pool.query('SELECT pg_reload_conf()');
    console.log('autovacuum was off on this server: on for the soak (ALTER SYSTEM), put back afterwards');
    return async () => {
      await pool.query(
        previous === null
          ? 'ALTER SYSTEM RESET autovacuum'
          : `ALTER SYSTEM SET autovacuum = ${pg.escapeLiteral(previous)}`,
      );
      await pool.query('SELECT pg_reload_conf()');
    };
  } catch (error) {
    // Not a superuser: the soak still runs, and says why its figures may drift.
    console.log(
      `autovacuum is off on this server and could not be turned on (${(error as Error).message}): figures will drift with the vehicles table's bloat`,
    );
    return null;
  }
}

/** The read model's table at the end: its size and dead row versions say whether vacuum kept up. */
async function vehiclesTable(pool: Pool): Promise<{ heapMiB: number; liveRows: number; deadRows: number }> {
  const { rows } = await pool.query<{ heapMiB: number; liveRows: number; deadRows: number }>(
    `SELECT round(pg_relation_size(relid) / 1048576.0, 1)::float AS "heapMiB", n_live_tup::int AS "liveRows",
            n_dead_tup::int AS "deadRows"
     FROM pg_stat_user_tables WHERE relname = 'vehicles'`,
  );
  return rows[0]!;
}

/** The soak's fleet: the ingest bench's, monitored, with probe vehicles and core webhook subscribers. */
async function seedSoak(pool: Pool, receivers: { core: string; monitoring: string }) {
  const { connectionId, vehicleIds } = await seed(pool, pushSecret);
  const { rows: owner } = await pool.query<{ companyId: string }>(
    `SELECT company_id AS "companyId" FROM provider_connections WHERE id = $1`,
    [connectionId],
  );
  const companyId = owner[0]!.companyId;
  // Geofences around the fleet's first fixes, so edges are really crossed (as bench/monitoring.ts does).
  const first = JSON.parse(generateBatches(benchFleet(), 1, vehicleIds)[0]!.body) as {
    readings: Array<{ signals: { location?: { lat: number; lon: number } } }>;
  };
  const fixes = first.readings.flatMap((r) => (r.signals.location ? [r.signals.location] : [])).slice(0, 20);
  await subscribeFleet(pool, receivers.monitoring, fixes);
  const probes = Array.from({ length: probeVehicles }, (_, i) => `soak-probe-${i + 1}`);
  const { rows: probeRows } = await pool.query<{ id: string; providerVehicleId: string }>(
    `INSERT INTO vehicles (company_id, name, telematics_provider, provider_connection_id, provider_vehicle_id)
     SELECT $1, p, 'simulator', $2, p FROM unnest($3::text[]) AS p
     RETURNING id, provider_vehicle_id AS "providerVehicleId"`,
    [companyId, connectionId, probes],
  );
  const { rows: fleetRows } = await pool.query<{ id: string }>(
    `SELECT id FROM vehicles WHERE company_id = $1 AND provider_vehicle_id = ANY($2::text[])`,
    [companyId, vehicleIds],
  );
  const subscribers: Subscriber[] = [];
  for (let i = 1; i <= coreSubscribers; i++) subscribers.push(await seedSubscriber(pool, receivers.core, i));
  return {
    companyId,
    connectionId,
    vehicleIds,
    readIds: fleetRows.map((r) => r.id),
    probes: probeRows,
    apiKey: await createBenchApiKey(pool, companyId),
    subscribers,
  };
}

interface ReceiverStats {
  received: number;
  invalid: number;
}
const getJson = async <T>(url: string): Promise<T> => (await fetch(url)).json() as Promise<T>;

/** Two windows of one side: req/s averaged, p99 the worse of the two. */
function combine(windows: LoadResult[]): { rps: number; p99Ms: number; failed: number } {
  return {
    rps: Math.round(windows.reduce((sum, w) => sum + w.requestsPerSecond, 0) / windows.length),
    p99Ms: Math.max(...windows.map((w) => w.p99Ms)),
    failed: windows.reduce((sum, w) => sum + w.non2xx + w.errors, 0),
  };
}

export async function benchSoak(args: string[]): Promise<Record<string, unknown>> {
  const minutes = option(args, '--minutes', 20);
  const fixedRate = option(args, '--ingest-rate', 0);
  const singleApi = args.includes('--single-api');
  const { url: databaseUrl, pool } = await freshDatabase('soak');
  const restoreAutovacuum = await turnAutovacuumOn(pool);
  const prefix = `{soak${Date.now()}}`;
  const redis = createRedis(benchConfig, 'worker', benchLog);
  const queues = new Queues(redis, prefix);
  const services: Array<{ name: string; service: Service }> = [];
  let stopping: Promise<void> | null = null;
  let writing = true;
  let stopSampling = () => {};
  // The driver first (no more pushes), then the APIs and workers, receivers last.
  const stopAll = () =>
    (stopping ??= (async () => {
      for (const { service } of [...services].reverse()) await service.stop();
    })());
  // A signal may come while a service is still starting (not yet in `services`): stop them all.
  const onSignal = (signal: NodeJS.Signals) => {
    console.log(`\n${signal}: stopping the soak's processes…`);
    void stopAllServices()
      .then(() => restoreAutovacuum?.())
      .finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const start = async (name: string, ...startArgs: Parameters<typeof startService>) => {
    const service = await startService(...startArgs);
    services.push({ name, service });
    return service;
  };

  try {
    const coreReceiver = await start(
      'core receiver',
      'bench/webhook-receiver.js',
      [String(ports.coreReceiver), coreSecret],
      {},
      ports.coreReceiver,
      '/stats',
    );
    const monitoringReceiver = await start(
      'monitoring receiver',
      'bench/webhook-receiver.js',
      [String(ports.monitoringReceiver), monitoringSecret, 'monitoring'],
      {},
      ports.monitoringReceiver,
      '/stats',
    );
    const fleet = await seedSoak(pool, { core: coreReceiver.url, monitoring: monitoringReceiver.url });

    const env = serviceEnv(databaseUrl, prefix, {
      DATABASE_REPLICA_URLS: '',
      WEBHOOK_ALLOW_NETS: '127.0.0.1/32',
      RATE_LIMIT_PER_MINUTE: '10000000',
      INGEST_RATE_LIMIT_PER_MINUTE: '10000000',
    });
    const workers: Service[] = [];
    for (const [queue, port] of [
      ['ingest', ports.ingestWorker],
      ['health', ports.healthWorker],
      ['webhooks', ports.webhooksWorker],
    ] as const)
      workers.push(await start(`${queue} worker`, 'server/main.js', ['worker', queue], env, port, '/readyz'));
    // Failed jobs of every worker and failed delivery attempts (the receivers always answer 204).
    const workerFailures = async () =>
      (
        await Promise.all(workers.map((w) => metricSum(w.url, 'job_duration_seconds_count', { outcome: 'failed' })))
      ).reduce((sum, n) => sum + n, 0) +
      (await metricSum(workers[2]!.url, 'webhook_deliveries_total', { outcome: 'failed' }));
    const readApi = await start(
      singleApi ? 'API (all)' : 'read API',
      'server/main.js',
      ['api'],
      { ...env, API_ROLE: singleApi ? 'all' : 'read' },
      ports.readApi,
      '/readyz',
    );
    const pushApi = singleApi
      ? readApi
      : await start(
          'ingest API',
          'server/main.js',
          ['api'],
          { ...env, API_ROLE: 'ingest' },
          ports.ingestApi,
          '/readyz',
        );
    const bare = await start(
      'bare pg route',
      'bench/bare-pg-server.js',
      [String(ports.bare), databaseUrl, fleet.companyId],
      {},
      ports.bare,
      '/ready',
    );

    let rate = fixedRate;
    if (!rate) {
      console.log(`measuring ingest capacity: ${capacityReadings.toLocaleString()} readings pushed at once…`);
      const capacity = await measureCapacity(pool, pushApi.url, fleet.connectionId, fleet.vehicleIds);
      rate = Math.round(capacity / 2);
      console.log(
        `capacity ${capacity.toLocaleString()} readings/s end to end: the soak pushes ${rate.toLocaleString()}/s`,
      );
    }
    const driverOptions: DriverOptions = {
      port: ports.driver,
      pushUrl: pushApi.url,
      readUrl: readApi.url,
      connectionId: fleet.connectionId,
      pushSecret,
      apiKey: fleet.apiKey,
      readingsPerSecond: rate,
      fleet: { seed: 42, vehicleCount: fleet.vehicleIds.length, idPrefix: 'bench', start: soakFleetStart },
      vehicleIds: fleet.vehicleIds,
      probes: fleet.probes.map((p) => ({ providerVehicleId: p.providerVehicleId, id: p.id })),
    };
    const driver = await start(
      'load driver',
      'bench/soak-driver.js',
      [],
      {},
      ports.driver,
      '/stats',
      JSON.stringify(driverOptions),
    );

    // Core run events at a steady rate, each transaction followed by its relay request.
    let coreWriteErrors = 0;
    const writer = (async () => {
      for (let tick = 0; writing; tick++) {
        const due = Date.now() + 1000;
        await writeEventBatch(pool, queues, fleet.subscribers, coreEventsPerSecond, tick * coreEventsPerSecond).catch(
          () => coreWriteErrors++,
        );
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - Date.now())));
      }
    })();

    const headers = { authorization: `Bearer ${fleet.apiKey}` };
    const common = { connections, pipelining: 1 };
    const sides = {
      product: (duration: number) =>
        byIdLoad({ ...common, duration }, readApi.url, fleet.readIds, (id) => `/api/v1/vehicles/${id}`, headers),
      bare: (duration: number) => byIdLoad({ ...common, duration }, bare.url, fleet.readIds, (id) => `/vehicles/${id}`),
    };
    await load(sides.product(3));
    await load(sides.bare(3));

    const assertAlive = () => {
      const dead = services.find(({ service }) => service.process.exitCode !== null);
      if (dead) throw new Error(`${dead.name} exited with ${dead.service.process.exitCode} during the soak`);
    };
    const rssSamples = sampleRss(() => [
      ...services.map(({ name, service }) => ({ name, rssMiB: memoryOf(service.process.pid!).rssMiB })),
      { name: 'bench', rssMiB: process.memoryUsage().rss / 1048576 },
    ]);
    stopSampling = rssSamples.stop;
    const rows: Minute[] = [];
    const allVisibleMs: number[] = [];
    const driverStats = () => getJson<DriverStats>(`${driver.url}/stats`);
    const receiverStats = () =>
      Promise.all([
        getJson<ReceiverStats>(`${coreReceiver.url}/stats`),
        getJson<ReceiverStats>(`${monitoringReceiver.url}/stats`),
      ]);
    // What happened before minute 1 (the capacity phase, the warm-up) is not part of it.
    const [before, [coreBefore, monitoringBefore], failuresBefore] = await Promise.all([
      driverStats(),
      receiverStats(),
      workerFailures(),
    ]);
    let last = {
      at: Date.now(),
      pushedReadings: before.pushedReadings,
      pushErrors: before.pushErrors,
      probeErrors: before.probeErrors,
      probeTimeouts: before.probeTimeouts,
      coreWriteErrors,
      workerFailures: failuresBefore,
      core: coreBefore,
      monitoring: monitoringBefore,
    };
    console.log(
      `soaking for ${minutes} min: pushes to the ${singleApi ? 'all-role API (reads too)' : 'ingest-role API'}, reads at ${connections} connections…`,
    );
    for (let minute = 1; minute <= minutes; minute++) {
      const order = minute % 2 === 1 ? (['product', 'bare'] as const) : (['bare', 'product'] as const);
      const windows: Record<'product' | 'bare', LoadResult[]> = { product: [], bare: [] };
      for (let w = 0; w < 4; w++) {
        const side = order[w % 2]!;
        windows[side].push(await load(sides[side](windowSeconds)));
        assertAlive();
      }
      const [stats, [core, monitoring], failures, pending] = await Promise.all([
        driverStats(),
        receiverStats(),
        workerFailures(),
        inboxPending(pool),
      ]);
      const queueDepths: Record<string, number> = {};
      for (const name of monitoredQueues) {
        const counts = await queues.queue(name).getJobCounts('waiting', 'prioritized', 'active');
        queueDepths[name] = Object.values(counts).reduce((sum, n) => sum + n, 0);
      }
      const { meanMiB: rssMiB, peakMiB: rssPeakMiB } = rssSamples.minute();
      const product = combine(windows.product);
      const bareLoad = combine(windows.bare);
      const now = Date.now();
      const visible = [...stats.visibleMs].sort((a, b) => a - b);
      allVisibleMs.push(...visible);
      const errors =
        product.failed +
        bareLoad.failed +
        (stats.pushErrors - last.pushErrors) +
        (stats.probeErrors - last.probeErrors) +
        (coreWriteErrors - last.coreWriteErrors) +
        (failures - last.workerFailures) +
        (core.invalid - last.core.invalid) +
        (monitoring.invalid - last.monitoring.invalid);
      const row: Minute = {
        minute,
        product: { rps: product.rps, p99Ms: product.p99Ms },
        bare: { rps: bareLoad.rps, p99Ms: bareLoad.p99Ms },
        ratio: product.rps / bareLoad.rps,
        visibleP99Ms: percentile(visible, 99),
        visibleSamples: visible.length,
        visibleTimeouts: stats.probeTimeouts - last.probeTimeouts,
        pushedReadingsPerSecond: Math.round((stats.pushedReadings - last.pushedReadings) / ((now - last.at) / 1000)),
        behindReadings: stats.behindReadings,
        inboxPending: pending,
        queueDepths,
        coreDelivered: core.received - last.core.received,
        monitoringDelivered: monitoring.received - last.monitoring.received,
        rssMiB,
        rssPeakMiB,
        errors,
      };
      rows.push(row);
      if (errors > 0 && stats.lastError) console.log(`minute ${minute}: last driver error: ${stats.lastError}`);
      console.log(
        `minute ${minute}: by-id ${row.product.rps} req/s p99 ${row.product.p99Ms} ms, bare ${row.bare.rps} p99 ${row.bare.p99Ms} ms ` +
          `(${row.ratio.toFixed(2)}); push→visible p99 ${row.visibleP99Ms} ms (${row.visibleSamples} probes` +
          `${row.visibleTimeouts ? `, ${row.visibleTimeouts} not visible in time` : ''}); ` +
          `${row.pushedReadingsPerSecond} readings/s; inbox ${row.inboxPending}; errors ${row.errors}`,
      );
      last = {
        at: now,
        pushedReadings: stats.pushedReadings,
        pushErrors: stats.pushErrors,
        probeErrors: stats.probeErrors,
        probeTimeouts: stats.probeTimeouts,
        coreWriteErrors,
        workerFailures: failures,
        core,
        monitoring,
      };
    }
    writing = false;
    await writer;

    printTable(
      `Soak, per minute: by-id at ${connections} connections on the ${singleApi ? 'all-role' : 'read-role'} API and on the bare route (alternated, ${windowSeconds} s windows), ingest at ${rate.toLocaleString()} readings/s to the ${singleApi ? 'same API' : 'ingest-role API'}`,
      rows.map((r) => ({
        min: r.minute,
        'by-id req/s': r.product.rps,
        'p99 ms': r.product.p99Ms,
        'bare req/s': r.bare.rps,
        'bare p99 ms': r.bare.p99Ms,
        ratio: r.ratio.toFixed(3),
        'push→visible p99 ms': r.visibleP99Ms,
        'readings/s': r.pushedReadingsPerSecond,
        'driver behind': r.behindReadings,
        'inbox pending': r.inboxPending,
        ...Object.fromEntries(monitoredQueues.map((q) => [`${q} queue`, r.queueDepths[q]!])),
        'core delivered': r.coreDelivered,
        'monitoring delivered': r.monitoringDelivered,
        errors: r.errors,
      })),
    );
    printTable(
      `Resident memory per process per minute (MiB): the mean of samples every ${rssSampleMs / 1000} s`,
      rows.map((r) => ({ min: r.minute, ...r.rssMiB })),
    );
    printTable(
      'Resident memory per process per minute (MiB): the highest sample',
      rows.map((r) => ({ min: r.minute, ...r.rssPeakMiB })),
    );

    const series: Array<{ name: string; values: number[]; thresholds: TrendThresholds }> = [
      { name: 'by-id p99 ms', values: rows.map((r) => r.product.p99Ms), thresholds: thresholds.latency },
      { name: 'push→visible p99 ms', values: rows.map((r) => r.visibleP99Ms), thresholds: thresholds.visible },
      { name: 'inbox pending', values: rows.map((r) => r.inboxPending), thresholds: thresholds.depth },
      ...monitoredQueues.map((q) => ({
        name: `${q} queue depth`,
        values: rows.map((r) => r.queueDepths[q]!),
        thresholds: thresholds.depth,
      })),
      ...Object.keys(rows[0]?.rssMiB ?? {}).map((name) => ({
        name: `RSS ${name} MiB`,
        values: rows.map((r) => r.rssMiB[name]!),
        thresholds: thresholds.rss,
      })),
    ];
    const trends: Array<{ series: string } & Trend> = series.map((s) => ({
      series: s.name,
      ...fitTrend(s.values, s.thresholds),
    }));
    printTable(
      'Trends: least-squares line per series; upward = slope significant (one-sided 95 %) and the rise over the run past the threshold',
      trends.map((t, i) => ({
        series: t.series,
        'slope /min': t.slope.toFixed(2),
        'rise over run': t.rise.toFixed(1),
        t: Number.isFinite(t.t) ? t.t.toFixed(2) : String(t.t),
        threshold: `${series[i]!.thresholds.relativeRise * 100} % of mean and ≥ ${series[i]!.thresholds.minRise}`,
        verdict: t.verdict,
      })),
    );

    const mean = (values: number[]) => values.reduce((sum, v) => sum + v, 0) / Math.max(1, values.length);
    const productRps = mean(rows.map((r) => r.product.rps));
    const bareRps = mean(rows.map((r) => r.bare.rps));
    const ratio = productRps / bareRps;
    allVisibleMs.sort((a, b) => a - b);
    const visibleP99Ms = percentile(allVisibleMs, 99);
    const upward = trends.filter((t) => t.verdict === 'upward').map((t) => t.series);
    const fitted = trends.some((t) => t.verdict !== 'too few points');
    const errors = rows.reduce((sum, r) => sum + r.errors, 0);
    const verdict = (met: boolean) => (met ? 'met' : 'missed');
    const targets = {
      byIdRatio: verdict(ratio >= 0.9),
      pushToVisible: verdict(visibleP99Ms < 1000),
      noUpwardTrend: fitted ? verdict(upward.length === 0) : 'not checked (fewer than 3 minutes)',
      zeroErrors: verdict(errors === 0),
    };
    console.log(
      `\ntarget by-id ≥ 0.9 × bare under load: ${targets.byIdRatio} (${ratio.toFixed(3)}: ${Math.round(productRps)} against ${Math.round(bareRps)} req/s)`,
    );
    console.log(
      `target push-to-visible p99 < 1 s: ${targets.pushToVisible} (${visibleP99Ms} ms over ${allVisibleMs.length} probes; p50 ${percentile(allVisibleMs, 50)} ms)`,
    );
    console.log(
      `target no figure trending upward: ${targets.noUpwardTrend}${upward.length ? ` (${upward.join(', ')})` : ''}`,
    );
    console.log(`target zero errors: ${targets.zeroErrors} (${errors})`);
    const vehicles = await vehiclesTable(pool);
    console.log(
      `vehicles table at the end: ${vehicles.heapMiB} MiB, ${vehicles.liveRows} live and ${vehicles.deadRows} dead row versions`,
    );
    return {
      minutes,
      singleApi,
      ingestReadingsPerSecond: rate,
      ingestRateMeasured: !fixedRate,
      connections,
      windowSeconds,
      coreEventsPerSecond,
      byIdRatio: ratio,
      productReqPerSecond: Math.round(productRps),
      bareReqPerSecond: Math.round(bareRps),
      pushToVisibleMs: { p50: percentile(allVisibleMs, 50), p99: visibleP99Ms, samples: allVisibleMs.length },
      errors,
      vehiclesTable: vehicles,
      perMinute: rows,
      trends,
      targets,
    };
  } finally {
    writing = false;
    stopSampling();
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    await stopAll();
    await queues.close();
    await redis.quit();
    await restoreAutovacuum?.();
    await pool.end();
  }
}
