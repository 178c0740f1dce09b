/**
 * Forward-only migrations: `migrations/NNNN_name.sql`, applied in order, each in its own
 * transaction and recorded in `schema_migrations`. An advisory lock makes concurrent start-ups
 * (several replicas booting at once) apply each file exactly once.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { migrationsDir } from '../paths.js';
import type { Logger } from '../log.js';
import { createPool, type Pool } from './pool.js';
import { ensureApiRequestLogPartitions } from './api-request-log.js';
import { ensureReadingPartitions } from './readings.js';
import { autovacuumOn } from './server-settings.js';

export interface Migration {
  id: string;
  sql: string;
}

// Any constant works; it only has to be the same in every process of this product.
const migrationLockKey = 727_274_001;

export function readMigrations(dir = migrationsDir): Migration[] {
  return readdirSync(dir)
    .filter((file) => /^\d{4}_[a-z0-9_]+\.sql$/.test(file))
    .sort()
    .map((file) => ({ id: file.replace(/\.sql$/, ''), sql: readFileSync(join(dir, file), 'utf8') }));
}

/** Creates the database named in `databaseUrl` when it does not exist yet. */
export async function ensureDatabase(databaseUrl: string): Promise<boolean> {
  const target = new URL(databaseUrl);
  const name = decodeURIComponent(target.pathname.slice(1));
  if (!name) throw new Error('DATABASE_URL names no database');
  const maintenance = new URL(databaseUrl);
  maintenance.pathname = '/postgres';
  const client = new pg.Client({ connectionString: maintenance.toString() });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount) return false;
    try {
      await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
    } catch (error) {
      // Another process created it between our check and our CREATE: 42P04, or 23505 when both
      // CREATEs raced inside the catalog.
      const code = (error as { code?: string }).code;
      if (code !== '42P04' && code !== '23505') throw error;
      return false;
    }
    return true;
  } finally {
    await client.end();
  }
}

export async function migrate(pool: Pool, log: Logger, migrations = readMigrations()): Promise<string[]> {
  const client = await pool.connect();
  const applied: string[] = [];
  try {
    await client.query('SELECT pg_advisory_lock($1)', [migrationLockKey]);
    await client.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (id text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const done = new Set(
      (await client.query<{ id: string }>('SELECT id FROM schema_migrations')).rows.map((r) => r.id),
    );
    for (const migration of migrations) {
      if (done.has(migration.id)) continue;
      await client.query('BEGIN');
      try {
        await client.query(migration.sql);
        await client.query('INSERT INTO schema_migrations (id) VALUES ($1)', [migration.id]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw new Error(`migration ${migration.id} failed: ${(error as Error).message}`, { cause: error });
      }
      applied.push(migration.id);
      log.info({ migration: migration.id }, 'migration applied');
    }
    await ensureReadingPartitions(client, new Date());
    await ensureApiRequestLogPartitions(client, new Date());
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [migrationLockKey]).catch(() => {});
    client.release();
  }
  return applied;
}

/** Migrations on disk that the database has not recorded; empty when the schema is current. */
export async function pendingMigrations(pool: Pool, migrationIds: readonly string[]): Promise<string[]> {
  const exists = await pool.query(`SELECT to_regclass('schema_migrations') IS NOT NULL AS present`);
  if (!exists.rows[0]?.present) return [...migrationIds];
  const result = await pool.query<{ id: string }>('SELECT id FROM schema_migrations');
  const done = new Set(result.rows.map((r) => r.id));
  return migrationIds.filter((id) => !done.has(id));
}

/**
 * Creates the database when missing, applies migrations and the coming readings and request log
 * partitions (advisory-locked, so replicas may race), and warns when the server has autovacuum off.
 * Returns the migrations it applied.
 */
export async function prepareDatabase(databaseUrl: string, log: Logger): Promise<string[]> {
  if (await ensureDatabase(databaseUrl)) log.info('database created');
  const pool = createPool(databaseUrl, 1, log);
  try {
    const applied = await migrate(pool, log);
    if (!(await autovacuumOn(pool)))
      log.warn(
        'Postgres has autovacuum off: the vehicles table bloats under ingest and its reads and writes slow with it (docs/operations.md "Postgres")',
      );
    return applied;
  } finally {
    await pool.end();
  }
}
