/**
 * A real application for one test file: its own database and Redis prefix, the real Fastify app
 * (driven with inject or over loopback), and small helpers that use the operator API the way an
 * operator would.
 */
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { inject } from 'vitest';
import { buildApp, type AppDeps } from '../../src/api/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { readMigrations } from '../../src/db/migrate.js';
import { createPool, type Pool } from '../../src/db/pool.js';
import { createLogger } from '../../src/log.js';
import { createMetrics } from '../../src/metrics.js';
import type { QueueName } from '../../src/queue/catalog.js';
import { createRedis, type RedisConnection } from '../../src/queue/connection.js';
import { Queues } from '../../src/queue/queues.js';
import { startWorkers, type RunningWorkers } from '../../workers/index.js';
import { createTestDatabase, testRedisPrefix } from './database.js';

export const adminToken = 'test-admin-token-0123456789';
export const testSecretsKey = '00'.repeat(32);

export interface TestApp {
  app: FastifyInstance;
  pool: Pool;
  redis: RedisConnection;
  config: Config;
  queues: Queues;
  /** What the app was built from, to build a second API process over the same database and Redis. */
  deps: AppDeps;
  /** Runs real BullMQ workers for these queues in this process until close(). */
  startWorkers(names: QueueName[], now?: () => Date): Promise<RunningWorkers>;
  close(): Promise<void>;
  admin(
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    url: string,
    body?: unknown,
  ): Promise<LightMyRequestResponse>;
  api(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    key: string,
    body?: unknown,
  ): Promise<LightMyRequestResponse>;
  createCompany(name?: string): Promise<{ id: string; key: string }>;
  createVehicle(companyId: string, body?: Record<string, unknown>): Promise<Record<string, any>>;
}

/** `env` may be computed from the test database's URL (a replica's URL names the same database). */
export async function createTestApp(
  env: Record<string, string> | ((databaseUrl: string) => Record<string, string>) = {},
  now?: () => Date,
): Promise<TestApp> {
  const database = await createTestDatabase();
  const config = loadConfig({
    DATABASE_URL: database.url,
    REDIS_URL: inject('redisUrl'),
    REDIS_CLUSTER: String(inject('redisCluster')),
    REDIS_PREFIX: testRedisPrefix(),
    ADMIN_TOKEN: adminToken,
    SECRETS_KEY: testSecretsKey,
    LOG_LEVEL: 'silent',
    ...(typeof env === 'function' ? env(database.url) : env),
  });
  const log = createLogger(config.logLevel);
  const pool = createPool(config.databaseUrl, 5, log, config);
  const redis = createRedis(config, 'client', log);
  const producer = createRedis(config, 'producer', log);
  const queues = new Queues(producer, config.redisPrefix);
  const deps: AppDeps = {
    config,
    pool,
    redis,
    log,
    queues,
    metrics: createMetrics('test'),
    migrationIds: readMigrations().map((m) => m.id),
    ...(now ? { now } : {}),
  };
  const app = await buildApp(deps);
  await app.ready();
  const running: Array<{ workers: RunningWorkers; queues: Queues; connection: RedisConnection }> = [];

  const admin: TestApp['admin'] = (method, url, body) =>
    app.inject({
      method,
      url: `/admin/v1${url}`,
      headers: { authorization: `Bearer ${adminToken}` },
      ...(body === undefined ? {} : { payload: body as object }),
    });
  const api: TestApp['api'] = (method, url, key, body) =>
    app.inject({
      method,
      url: `/api/v1${url}`,
      headers: { authorization: `Bearer ${key}` },
      ...(body === undefined ? {} : { payload: body as object }),
    });

  return {
    app,
    pool,
    redis,
    config,
    queues,
    deps,
    admin,
    api,
    startWorkers: async (names, workerNow) => {
      const connection = createRedis(config, 'worker', log);
      const workerQueues = new Queues(connection, config.redisPrefix);
      const workers = await startWorkers(
        {
          config,
          pool,
          log,
          metrics: createMetrics('test-worker'),
          queues: workerQueues,
          now: workerNow ?? now ?? (() => new Date()),
        },
        names,
        connection,
      );
      running.push({ workers, queues: workerQueues, connection });
      return workers;
    },
    close: async () => {
      for (const { workers, queues: workerQueues, connection } of running) {
        await workers.close();
        await workerQueues.close();
        connection.disconnect();
      }
      await app.close();
      await queues.close();
      producer.disconnect();
      await pool.end();
      redis.disconnect();
      await database.drop();
    },
    createCompany: async (name = 'Acme Fleet') => {
      const company = (await admin('POST', '/companies', { name })).json().data;
      const key = (await admin('POST', `/companies/${company.id}/api-keys`, { name: 'test' })).json().data.key;
      return { id: company.id, key };
    },
    createVehicle: async (companyId, body = {}) => {
      const response = await admin('POST', `/companies/${companyId}/vehicles`, {
        name: 'Van 1',
        vin: '1HGCM82633A004352',
        license_plate: 'ABC-123',
        make: 'Ford',
        model: 'Transit',
        year: 2022,
        ...('provider_connection_id' in body ? {} : { telematics_provider: null }),
        ...body,
      });
      if (response.statusCode !== 201) throw new Error(`vehicle create failed: ${response.body}`);
      return response.json().data;
    },
  };
}
