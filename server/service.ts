/**
 * The composition root: starts the service in one of its modes and returns what must be closed,
 * in order, on shutdown. It sits above src/ and workers/ because it wires both. Used by the
 * `main` entry point and by the demo.
 *   start   the API and every worker in one process
 *   api     the API only (API_ROLE: all of it, only provider pushes, or all but pushes)
 *   worker  the named queues' workers (all when none is named) plus /healthz, /readyz, /metrics
 */
import Fastify from 'fastify';
import { buildApp } from '../src/api/app.js';
import { installErrorHandlers } from '../src/web/error-handler.js';
import { opsRoutes, type OpsDeps } from '../src/api/routes/ops.js';
import { ConfigError, type Config } from '../src/config.js';
import { CpuPool } from '../src/cpu-pool/pool.js';
import { loadPlaces } from '../src/domain/places.js';
import { prepareDatabase, readMigrations } from '../src/db/migrate.js';
import { createPool } from '../src/db/pool.js';
import type { Logger } from '../src/log.js';
import { createMetrics } from '../src/metrics.js';
import { installPipelineGauges, loadPipelineStatus } from '../src/queue/status.js';
import { queueNames, type QueueName } from '../src/queue/catalog.js';
import { createRedis } from '../src/queue/connection.js';
import { Queues } from '../src/queue/queues.js';
import { startWorkers } from '../workers/index.js';

export type ServiceMode = 'start' | 'api' | 'worker';
export type Closer = () => Promise<unknown>;

export async function startService(
  config: Config,
  log: Logger,
  mode: ServiceMode,
  queueArgs: string[] = [],
): Promise<Closer[]> {
  await prepareDatabase(config.databaseUrl, log);
  const closers: Closer[] = [];
  const pool = createPool(config.databaseUrl, config.databasePoolSize, log, config);
  const redis = createRedis(config, 'client', log);
  closers.push(
    () => pool.end(),
    () => redis.quit(),
  );
  const metrics = createMetrics(mode);
  const migrationIds = readMigrations().map((m) => m.id);
  let readiness: OpsDeps['readiness'];

  if (mode === 'worker' || mode === 'start') {
    const names = queueArgs.length > 0 ? queueArgs : [...queueNames];
    const unknown = names.filter((name) => !queueNames.includes(name as QueueName));
    if (unknown.length > 0)
      throw new ConfigError('worker', `queues must be among ${queueNames.join(', ')} (got ${unknown.join(', ')})`);
    const workerRedis = createRedis(config, 'worker', log);
    const queues = new Queues(workerRedis, config.redisPrefix);
    const workers = await startWorkers(
      { config, pool, log, metrics, queues, now: () => new Date() },
      names as QueueName[],
      workerRedis,
    );
    readiness = { schedules: () => workers.schedules.assertLive() };
    closers.unshift(
      () => workers.close(),
      () => queues.close(),
      () => workerRedis.quit(),
    );
    log.info({ queues: names }, 'workers started');
  }

  if (mode === 'api' || mode === 'start') {
    // Before listening, so no request waits for the places' parse (about half a second, docs/places.md);
    // an ingest-role process serves nothing that names places and keeps its 10 MiB free.
    if (config.apiRole !== 'ingest') {
      const placesStartedMs = performance.now();
      const places = loadPlaces();
      log.info({ places: places.size, ms: Math.round(performance.now() - placesStartedMs) }, 'places loaded');
    }
    const producerRedis = createRedis(config, 'producer', log);
    const apiQueues = new Queues(producerRedis, config.redisPrefix);
    closers.unshift(
      () => apiQueues.close(),
      () => producerRedis.quit(),
    );
    const cpuPool = new CpuPool(config, log);
    const app = await buildApp({
      config,
      pool,
      redis,
      log,
      metrics,
      queues: apiQueues,
      migrationIds,
      cpuPool,
      ...(readiness ? { readiness } : {}),
    });
    installPipelineGauges(metrics, () => loadPipelineStatus(apiQueues, pool));
    await app.listen({ port: config.port, host: config.host });
    // The pool first: its tasks (up to CPU_TASK_BUDGET_MS each) answer 503 at once rather than
    // outlast the app's 10 s wait for running requests; then the app closes.
    closers.unshift(
      () => cpuPool.close(),
      () => app.close(),
    );
  } else {
    const ops = Fastify({ logger: false });
    installErrorHandlers(ops);
    await ops.register(opsRoutes, {
      pool,
      redis,
      metrics,
      migrationIds,
      metricsToken: config.metricsToken,
      ...(readiness ? { readiness } : {}),
    });
    await ops.listen({ port: config.port, host: config.host });
    closers.unshift(() => ops.close());
  }
  return closers;
}

/** SIGINT/SIGTERM run the closers in order (HTTP first, pools last); a second signal exits at once. */
export function closeOnSignals(closers: Closer[], log: Logger): void {
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) {
      log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    closing = true;
    log.info({ signal }, 'shutting down');
    for (const close of closers) {
      await close().catch((err: unknown) => log.error({ err }, 'error while shutting down'));
    }
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}
