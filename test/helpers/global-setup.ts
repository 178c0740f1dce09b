/**
 * Once per test run: find Postgres and Redis (DATABASE_URL / REDIS_URL, else the local defaults,
 * else testcontainers when a Docker engine is available), and build a migrated template database
 * that every test file clones (test/helpers/database.ts).
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import { Redis } from 'ioredis';
import type { TestProject } from 'vitest/node';
import { migrate, readMigrations } from '../../src/db/migrate.js';
import { createLogger } from '../../src/log.js';

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string;
    templateDatabase: string;
    redisUrl: string;
    /** REDIS_CLUSTER=true: redisUrl is a seed node of a Redis Cluster (test/cluster). */
    redisCluster: boolean;
  }
}

const stop: Array<() => Promise<unknown>> = [];

async function reachablePostgres(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}

async function reachableRedis(url: string): Promise<boolean> {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 2000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  redis.on('error', () => {});
  try {
    await redis.connect();
    await redis.ping();
    return true;
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

async function fromContainers(): Promise<{ postgresUrl: string; redisUrl: string }> {
  const { GenericContainer, Wait } = await import('testcontainers');
  try {
    const postgres = await new GenericContainer('postgres:16-alpine')
      .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: 'trust' })
      .withExposedPorts(5432)
      .withWaitStrategy(Wait.forLogMessage(/ready to accept connections/, 2))
      .start();
    const redis = await new GenericContainer('redis:7-alpine').withExposedPorts(6379).start();
    stop.push(
      () => postgres.stop(),
      () => redis.stop(),
    );
    return {
      postgresUrl: `postgres://postgres@${postgres.getHost()}:${postgres.getMappedPort(5432)}/postgres`,
      redisUrl: `redis://${redis.getHost()}:${redis.getMappedPort(6379)}`,
    };
  } catch (error) {
    throw new Error(
      `Postgres/Redis are not reachable and no Docker engine could start them (${(error as Error).message}). ` +
        'Start them (see README) or set DATABASE_URL and REDIS_URL.',
      { cause: error },
    );
  }
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** Drops databases left by test runs that died more than an hour ago. */
async function dropAbandoned(admin: pg.Client): Promise<void> {
  const { rows } = await admin.query<{ datname: string }>(
    `SELECT datname FROM pg_database WHERE datname LIKE 'fleet_t\\_%'`,
  );
  const cutoff = Math.floor(Date.now() / 1000) - 3600;
  for (const { datname } of rows) {
    const created = Number(datname.split('_')[2]);
    if (Number.isFinite(created) && created < cutoff) {
      await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(datname)} WITH (FORCE)`).catch(() => {});
    }
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let postgresUrl = withDatabase(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres', 'postgres');
  let redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  if (!(await reachablePostgres(postgresUrl)) || !(await reachableRedis(redisUrl))) {
    ({ postgresUrl, redisUrl } = await fromContainers());
  }

  const migrations = readMigrations();
  const digest = createHash('sha256')
    .update(migrations.map((m) => m.id + m.sql).join('\n'))
    .digest('hex')
    .slice(0, 12);
  const templateDatabase = `fleet_tpl_${digest}`;
  const admin = new pg.Client({ connectionString: postgresUrl });
  await admin.connect();
  try {
    await dropAbandoned(admin);
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [templateDatabase]);
    if (!exists.rowCount) {
      const building = `${templateDatabase}_build_${process.pid}`;
      await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(building)}`);
      const pool = new pg.Pool({ connectionString: withDatabase(postgresUrl, building), max: 1 });
      await migrate(pool, createLogger('silent'), migrations);
      await pool.end();
      // Rename when complete, so a concurrent run never clones a half-migrated template.
      await admin
        .query(`ALTER DATABASE ${pg.escapeIdentifier(building)} RENAME TO ${pg.escapeIdentifier(templateDatabase)}`)
        .catch(async () => admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(building)}`));
    }
  } finally {
    await admin.end();
  }

  project.provide('postgresUrl', postgresUrl);
  project.provide('templateDatabase', templateDatabase);
  project.provide('redisUrl', redisUrl);
  project.provide('redisCluster', process.env.REDIS_CLUSTER === 'true');
  return async () => {
    for (const close of stop) await close();
  };
}
