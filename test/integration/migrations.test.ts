import { Writable } from 'node:stream';
import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import { ensureDatabase, migrate, pendingMigrations, prepareDatabase, readMigrations } from '../../src/db/migrate.js';
import { createPool } from '../../src/db/pool.js';
import { ensureReadingPartitions } from '../../src/db/readings.js';
import { createLogger } from '../../src/log.js';
import { createTestDatabase, testDatabaseName } from '../helpers/database.js';

const log = createLogger('silent');

function databaseUrl(name: string): string {
  const url = new URL(inject('postgresUrl'));
  url.pathname = `/${name}`;
  return url.toString();
}

async function dropDatabase(name: string) {
  const admin = new pg.Client({ connectionString: inject('postgresUrl') });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
  await admin.end();
}

describe('migrations', () => {
  it('creates a missing database once, then migrates it exactly once under concurrent start-ups', async () => {
    const name = testDatabaseName();
    const url = databaseUrl(name);
    try {
      const created = await Promise.all([ensureDatabase(url), ensureDatabase(url), ensureDatabase(url)]);
      expect(created.filter(Boolean)).toHaveLength(1);
      const pools = Array.from({ length: 4 }, () => createPool(url, 2, log));
      const applied = await Promise.all(pools.map((pool) => migrate(pool, log)));
      const all = readMigrations().map((m) => m.id);
      expect(applied.flat().sort()).toEqual(all.sort());
      expect(await pendingMigrations(pools[0]!, all)).toEqual([]);
      const { rows } = await pools[0]!.query('SELECT id FROM schema_migrations ORDER BY id');
      expect(rows.map((r) => r.id)).toEqual(all);
      await Promise.all(pools.map((pool) => pool.end()));
    } finally {
      await dropDatabase(name);
    }
  });

  it('start-up warns when the server has autovacuum off, and only then', async () => {
    const database = await createTestDatabase();
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const admin = new pg.Client({ connectionString: inject('postgresUrl') });
    await admin.connect();
    try {
      const setting = (await admin.query<{ autovacuum: string }>('SHOW autovacuum')).rows[0]!.autovacuum;
      expect(await prepareDatabase(database.url, createLogger('info', 'test', sink))).toEqual([]);
      const warnings = lines
        .map((line) => JSON.parse(line) as { level: number; msg: string })
        .filter((line) => line.level === 40);
      // This workplace's Postgres has it off (for test speed), a production one on: either way the
      // warning says what the server says.
      expect(warnings.map((w) => w.msg)).toEqual(
        setting === 'off' ? [expect.stringContaining('Postgres has autovacuum off')] : [],
      );
    } finally {
      await admin.end();
      await database.drop();
    }
  });

  it('0032 folds vehicle_signals into the vehicle row: odometer values, and times only the table held', async () => {
    const name = testDatabaseName();
    const url = databaseUrl(name);
    await ensureDatabase(url);
    const pool = createPool(url, 1, log);
    try {
      const all = readMigrations();
      await migrate(
        pool,
        log,
        all.filter((m) => m.id < '0032'),
      );
      const vehicle = (
        await pool.query(
          `WITH company AS (INSERT INTO companies (name) VALUES ('Acme') RETURNING id)
           INSERT INTO vehicles (company_id, signals)
           SELECT id, '{"fuel_percent": 62, "observed_at": {"fuel_percent": "2026-11-20T10:01:00.000Z", "odometer_km": "2026-11-20T10:03:00.000Z"}}'
           FROM company RETURNING id`,
        )
      ).rows[0].id;
      await pool.query(
        `INSERT INTO vehicle_signals (vehicle_id, signal, recorded_at, value, source, value_changed_at)
         VALUES ($1, 'fuel_percent', '2026-11-20T10:01:00Z', '62', 'samsara', '2026-11-20T10:01:00Z'),
                ($1, 'odometer_km', '2026-11-20T10:03:00Z', '1000.5', 'samsara', '2026-11-20T10:03:00Z'),
                ($1, 'battery_voltage', '2026-11-20T10:04:00.123Z', '12.6', 'samsara', '2026-11-20T10:04:00.123Z')`,
        [vehicle],
      );
      await migrate(pool, log, all);
      const { rows } = await pool.query(
        `SELECT signals, odometer_values, to_regclass('vehicle_signals') AS tbl FROM vehicles WHERE id = $1`,
        [vehicle],
      );
      expect(rows[0]).toEqual({
        signals: {
          fuel_percent: 62,
          observed_at: {
            fuel_percent: '2026-11-20T10:01:00.000Z',
            odometer_km: '2026-11-20T10:03:00.000Z',
            battery_voltage: '2026-11-20T10:04:00.123Z',
          },
        },
        odometer_values: { odometer_km: 1000.5 },
        tbl: null,
      });
    } finally {
      await pool.end();
      await dropDatabase(name);
    }
  });

  it('a failing migration rolls back completely and is not recorded', async () => {
    const name = testDatabaseName();
    const url = databaseUrl(name);
    await ensureDatabase(url);
    const pool = createPool(url, 1, log);
    try {
      const broken = [{ id: '0001_half', sql: 'CREATE TABLE half_done (id int); SELECT 1/0;' }];
      await expect(migrate(pool, log, broken)).rejects.toThrow('migration 0001_half failed: division by zero');
      const { rows } = await pool.query(
        `SELECT to_regclass('half_done') AS t, (SELECT count(*) FROM schema_migrations)::int AS n`,
      );
      expect(rows[0]).toEqual({ t: null, n: 0 });
    } finally {
      await pool.end();
      await dropDatabase(name);
    }
  });

  it('creates monthly readings partitions ahead of time and routes rows into them', async () => {
    const name = testDatabaseName();
    const url = databaseUrl(name);
    await ensureDatabase(url);
    const pool = createPool(url, 1, log);
    try {
      await migrate(pool, log);
      const now = new Date();
      const currentMonth = `readings_${now.getUTCFullYear()}_${String(now.getUTCMonth() + 1).padStart(2, '0')}`;
      const { rows: made } = await pool.query(`SELECT to_regclass($1) IS NOT NULL AS present`, [currentMonth]);
      expect(made[0].present).toBe(true); // migrate made this month's partition, under its lock
      // A month far from now: last month to three ahead, then nothing new on a second call.
      // Concurrent callers (a starting process and the daily job) never race on CREATE TABLE.
      const others = [1, 2, 3].map(() => createPool(url, 1, log));
      try {
        const created = await Promise.all(others.map((p) => ensureReadingPartitions(p, new Date('2030-05-15Z'))));
        expect(created.reduce((a, b) => a + b, 0)).toBe(5);
      } finally {
        await Promise.all(others.map((p) => p.end()));
      }
      expect(await ensureReadingPartitions(pool, new Date('2030-11-15T00:00:00Z'))).toBe(5);
      expect(await ensureReadingPartitions(pool, new Date('2030-11-15T00:00:00Z'))).toBe(0);
      await pool.query(
        `INSERT INTO readings (vehicle_id, signal, recorded_at, value_num, source) VALUES (gen_random_uuid(), 'fuel_percent', '2031-01-31T23:59:59Z', 50, 'test')`,
      );
      const { rows } = await pool.query(`SELECT tableoid::regclass::text AS part FROM readings`);
      expect(rows[0].part).toBe('readings_2031_01');
    } finally {
      await pool.end();
      await dropDatabase(name);
    }
  });
});
