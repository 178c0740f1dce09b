/** A database of its own for one test file, cloned from the migrated template. */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A fresh database name carrying this run's id, so that only this run drops it (test/helpers/global-setup.ts). */
export function testDatabaseName(): string {
  return `fleet_t_${inject('testRunId')}_${randomBytes(4).toString('hex')}`;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const base = inject('postgresUrl');
  const name = testDatabaseName();
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  try {
    await admin.query(
      `CREATE DATABASE ${pg.escapeIdentifier(name)} TEMPLATE ${pg.escapeIdentifier(inject('templateDatabase'))}`,
    );
  } finally {
    await admin.end();
  }
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: base });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
      await client.end();
    },
  };
}

/** A Redis key prefix of its own (with a hash tag, as in production). */
export function testRedisPrefix(): string {
  return `{t${randomBytes(5).toString('hex')}}`;
}
