/**
 * Process entry point.
 *   start              migrate, then the API and every worker in one process
 *   api                the API only
 *   worker [queue...]  workers (all queues when none is named) plus /healthz, /readyz, /metrics
 *   migrate            create the database if missing, apply migrations, exit
 * SIGINT/SIGTERM close the HTTP server, let running jobs finish, then close pools.
 */
import Fastify from 'fastify';
import { buildApp } from './api/app.js';
import { installErrorHandlers } from './api/error-handler.js';
import { opsRoutes } from './api/routes/ops.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { ensureDatabase, migrate, readMigrations } from './db/migrate.js';
import { createPool } from './db/pool.js';
import { ensureReadingPartitions } from './db/readings.js';
import { createLogger, type Logger } from './log.js';
import { createMetrics } from './metrics.js';
import { queueNames, type QueueName } from './queue/catalog.js';
import { createRedis } from './queue/connection.js';
import { Queues } from './queue/queues.js';
import { startWorkers } from '../workers/index.js';

type Closer = () => Promise<unknown>;

async function prepareDatabase(config: Config, log: Logger): Promise<void> {
  if (await ensureDatabase(config.databaseUrl)) log.info('database created');
  const pool = createPool(config.databaseUrl, 1, log);
  try {
    await migrate(pool, log);
    await ensureReadingPartitions(pool, new Date());
  } finally {
    await pool.end();
  }
}

async function run(command: string, args: string[]): Promise<{ closers: Closer[]; log: Logger }> {
  const config = loadConfig();
  const log = createLogger(config.logLevel);
  if (config.secretsKeyGenerated) log.warn('SECRETS_KEY is not set: using the development key in .data/secrets.key');
  await prepareDatabase(config, log);
  if (command === 'migrate') return { closers: [], log };

  const closers: Closer[] = [];
  const pool = createPool(config.databaseUrl, config.databasePoolSize, log);
  const redis = createRedis(config.redisUrl, 'client', log);
  closers.push(() => pool.end(), () => redis.quit());
  const metrics = createMetrics(command);
  const migrationIds = readMigrations().map((m) => m.id);

  if (command === 'worker' || command === 'start') {
    const names = command === 'worker' && args.length > 0 ? args : [...queueNames];
    const unknown = names.filter((name) => !queueNames.includes(name as QueueName));
    if (unknown.length > 0) throw new ConfigError('worker', `queues must be among ${queueNames.join(', ')} (got ${unknown.join(', ')})`);
    const workerRedis = createRedis(config.redisUrl, 'worker', log);
    const queues = new Queues(workerRedis, config.redisPrefix);
    const workers = await startWorkers(
      { config, pool, log, metrics, queues, now: () => new Date() },
      names as QueueName[],
      workerRedis,
    );
    closers.unshift(() => workers.close(), () => queues.close(), () => workerRedis.quit());
    log.info({ queues: names }, 'workers started');
  }

  if (command === 'api' || command === 'start') {
    const app = await buildApp({ config, pool, redis, log, metrics, migrationIds });
    await app.listen({ port: config.port, host: config.host });
    closers.unshift(() => app.close());
  } else if (command === 'worker') {
    const ops = Fastify({ logger: false });
    installErrorHandlers(ops);
    await ops.register(opsRoutes, { pool, redis, metrics, migrationIds });
    await ops.listen({ port: config.port, host: config.host });
    closers.unshift(() => ops.close());
  }
  return { closers, log };
}

function installShutdown(closers: Closer[], log: Logger): void {
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

const [command = 'start', ...args] = process.argv.slice(2);
if (!['start', 'api', 'worker', 'migrate'].includes(command)) {
  console.error(`unknown command "${command}": use start, api, worker [queue...] or migrate`);
  process.exit(2);
}
try {
  const { closers, log } = await run(command, args);
  if (command === 'migrate') process.exit(0);
  installShutdown(closers, log);
} catch (error) {
  // Bad configuration is one clear line; anything else keeps its message but never a stack dump.
  console.error(error instanceof ConfigError ? error.message : `start-up failed: ${(error as Error).message}`);
  process.exit(1);
}
