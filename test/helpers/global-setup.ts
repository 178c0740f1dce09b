/**
 * Once per test run: find Postgres and Redis (DATABASE_URL / REDIS_URL, else the local defaults,
 * else testcontainers when a Docker engine is available), and build a migrated template database
 * that every test file clones (test/helpers/database.ts).
 */
import { createHash, randomBytes } from 'node:crypto';
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
    /** This run's id, in the name of every database it creates (see dropAbandoned). */
    testRunId: string;
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

/**
 * Test databases are named `fleet_t_<run id>_<random>` (test/helpers/database.ts). A run holds a
 * session advisory lock on its id for as long as it lives, on a connection of its own, so another
 * run can prove it dead: Postgres frees the lock when that connection ends, including when the
 * process is killed, on whatever machine it ran. A run drops its own databases at teardown, and
 * those of runs whose lock is free when it starts; a live run's databases are never touched.
 * Names from before run ids (`fleet_t_<unix seconds>_…`) have no lock: an hour's age decides.
 */
const runLockSpace = 0x666c7474; // 'fltt': the first key of the two-key advisory locks of test runs

function runLockKey(runId: string): number {
  return Number.parseInt(runId.slice(1), 16) | 0;
}

async function dropDatabases(admin: pg.Client, names: string[]): Promise<void> {
  for (const name of names) {
    await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`).catch(() => {});
  }
}

async function dropAbandoned(admin: pg.Client): Promise<void> {
  const { rows } = await admin.query<{ datname: string }>(
    `SELECT datname FROM pg_database WHERE datname LIKE 'fleet_t\\_%'`,
  );
  const byRun = new Map<string, string[]>();
  const cutoff = Math.floor(Date.now() / 1000) - 3600;
  const legacy: string[] = [];
  for (const { datname } of rows) {
    const runId = datname.split('_')[2] ?? '';
    if (/^r[0-9a-f]{8}$/.test(runId)) byRun.set(runId, [...(byRun.get(runId) ?? []), datname]);
    else if (Number(runId) < cutoff) legacy.push(datname);
  }
  for (const [runId, names] of byRun) {
    const { rows: free } = await admin.query<{ dead: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS dead', [
      runLockSpace,
      runLockKey(runId),
    ]);
    if (!free[0]!.dead) continue;
    await dropDatabases(admin, names);
    await admin.query('SELECT pg_advisory_unlock($1, $2)', [runLockSpace, runLockKey(runId)]);
  }
  await dropDatabases(admin, legacy);
}

/**
 * Takes this run's lock on a connection held until teardown. The id starts with a letter so that
 * the hour rule of older checkouts, which read that field as a number, never matches it.
 */
async function holdRunLock(postgresUrl: string): Promise<{ runId: string; release(): Promise<void> }> {
  const runId = `r${randomBytes(4).toString('hex')}`;
  const holder = new pg.Client({ connectionString: postgresUrl, application_name: `fleet test run ${runId}` });
  holder.on('error', () => {}); // a lost connection frees the lock: the next run may then drop ours
  await holder.connect();
  await holder.query('SELECT pg_advisory_lock($1, $2)', [runLockSpace, runLockKey(runId)]);
  return { runId, release: () => holder.end() };
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
  const run = await holdRunLock(postgresUrl);
  const admin = new pg.Client({ connectionString: postgresUrl });
  await admin.connect();
  try {
    await dropAbandoned(admin);
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [templateDatabase]);
    if (!exists.rowCount) {
      const building = `${templateDatabase}_build_${run.runId}`;
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
  project.provide('testRunId', run.runId);
  return async () => {
    // What a file left behind (a crash before its afterAll): only this run's databases.
    const admin = new pg.Client({ connectionString: postgresUrl });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ datname: string }>(
        'SELECT datname FROM pg_database WHERE starts_with(datname, $1)',
        [`fleet_t_${run.runId}_`],
      );
      await dropDatabases(
        admin,
        rows.map((r) => r.datname),
      );
    } finally {
      await admin.end();
    }
    await run.release();
    for (const close of stop) await close();
  };
}
