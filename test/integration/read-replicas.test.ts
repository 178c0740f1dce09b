/**
 * Read replicas on real Postgres: a streaming replica of the test cluster started on loopback
 * (test/helpers/replica.ts) behind DATABASE_REPLICA_URLS. Reads of the public API go to it; a
 * key's own writes are never missing from its reads; a lagging replica is skipped; a replica that
 * stops under load fails no request. Skips, saying why, where no replica can be started.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { fleetctl } from '../../src/cli/fleetctl.js';
import { createPool, type Pool } from '../../src/db/pool.js';
import { findActiveVehicle } from '../../src/db/vehicles.js';
import { createLogger } from '../../src/log.js';
import { adminToken, createTestApp, type TestApp } from '../helpers/app.js';
import { replicaSupport, startReplica, type StreamingReplica } from '../helpers/replica.js';

const support = await replicaSupport(inject('postgresUrl'));
if (!support.ok) console.warn(`read replica tests skipped: ${support.reason}`);

const maxLagMs = 1000;

describe.skipIf(!support.ok)('read replicas', () => {
  let replica: StreamingReplica;
  let t: TestApp;
  let replicaName: string;
  let company: { id: string; key: string };
  /** A second key of the company that never writes: its reads depend on lag alone. */
  let readerKey: string;
  let vehicleId: string;

  const routed = async (): Promise<{ primary: number; replica: number }> => {
    const { values } = await t.deps.metrics.readsRouted.get();
    const count = (target: string) => values.find((v) => v.labels.target === target)?.value ?? 0;
    return { primary: count('primary'), replica: count(replicaName) };
  };
  const inUse = async (): Promise<boolean> => {
    const { values } = await t.deps.metrics.replicaInUse.get();
    return values.find((v) => v.labels.replica === replicaName)?.value === 1;
  };
  const fallbacks = async (): Promise<number> => {
    const { values } = await t.deps.metrics.replicaFallbacks.get();
    return values.find((v) => v.labels.replica === replicaName)?.value ?? 0;
  };
  const until = async (what: string, check: () => Promise<boolean>, timeoutMs = 20_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const nameOf = async (key: string) => {
    const response = await t.api('GET', `/vehicles/${vehicleId}`, key);
    expect(response.statusCode, response.body).toBe(200);
    return response.json().data.name as string;
  };
  const rename = async (name: string) => {
    const response = await t.api('PUT', `/vehicles/${vehicleId}`, company.key, { name });
    expect(response.statusCode, response.body).toBe(200);
  };
  /** The replica's own view of the vehicle's name, read past the API. */
  const onReplica = async (pool: Pool) => (await findActiveVehicle(pool, company.id, vehicleId))?.name;
  const replicaState = async () => (await t.admin('GET', '/status')).json().data.reads.replicas[0].state as string;
  const setApplyDelay = async (delay: string | null) => {
    await replica.query(
      delay === null
        ? 'ALTER SYSTEM RESET recovery_min_apply_delay'
        : `ALTER SYSTEM SET recovery_min_apply_delay = '${delay}'`,
    );
    await replica.query('SELECT pg_reload_conf()');
  };

  beforeAll(async () => {
    if (!support.ok) return;
    replica = await startReplica(inject('postgresUrl'), support.bin);
    replicaName = `127.0.0.1:${replica.port}`;
    t = await createTestApp((databaseUrl) => ({
      DATABASE_REPLICA_URLS: replica.url(databaseUrl),
      DATABASE_REPLICA_MAX_LAG_MS: String(maxLagMs),
      // The default interval: a shorter one (100 ms) also bounds each check by 100 ms, which a
      // loaded test machine misses often enough to send reads to the primary now and then.
      DATABASE_REPLICA_CHECK_INTERVAL_MS: '500',
      // Thousands of requests a minute from one key: the per-key limit is not under test.
      RATE_LIMIT_PER_MINUTE: '10000000',
    }));
    company = await t.createCompany();
    const reader = await t.admin('POST', `/companies/${company.id}/api-keys`, { name: 'reader' });
    readerKey = reader.json().data.key;
    vehicleId = (await t.createVehicle(company.id)).id;
    await replica.caughtUp(inject('postgresUrl'));
    await until('replica in use', inUse);
  }, 180_000);

  afterAll(async () => {
    await t?.close();
    await replica?.remove();
  });

  it('serves reads from the replica', async () => {
    const before = await routed();
    for (let i = 0; i < 50; i++) {
      expect(await nameOf(readerKey)).toBe('Van 1');
      const list = await t.api('GET', '/vehicles', readerKey);
      expect(list.statusCode).toBe(200);
      expect(list.json().data.map((v: { id: string }) => v.id)).toEqual([vehicleId]);
    }
    const after = await routed();
    // A replica within its lag takes every read of a key without writes; a loaded machine may
    // push its lag past the limit for a moment, which sends a few to the primary.
    expect(after.replica - before.replica).toBeGreaterThanOrEqual(90);
    expect(after.replica - before.replica + after.primary - before.primary).toBe(100);
    expect(await fallbacks()).toBe(0);

    // What an operator sees: the replica's lag on /metrics, and the routing in fleetctl status.
    const metrics = await t.deps.metrics.registry.metrics();
    expect(metrics).toMatch(
      new RegExp(`^db_replica_lag_seconds\\{replica="${replicaName}",process="test"\\} [\\d.e-]+$`, 'm'),
    );
    expect(metrics).toMatch(
      new RegExp(`^db_reads_routed_total\\{target="${replicaName}",process="test"\\} \\d+$`, 'm'),
    );
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const lines: string[] = [];
    const code = await fleetctl(['status'], {
      env: { FLEET_API_URL: address, ADMIN_TOKEN: adminToken },
      stdout: (line) => lines.push(line),
      stderr: (line) => lines.push(line),
    });
    const text = lines.join('\n');
    expect(code, text).toBe(0);
    expect(text).toMatch(/^reads: \d+ to replicas, \d+ to the primary \(this API process, since it started\)$/m);
    expect(text).toMatch(
      new RegExp(`^replica ${replicaName}: in_use, lag \\d+ ms, replayed to [0-9A-F]+/[0-9A-F]+$`, 'm'),
    );
  });

  it('shows a key its own write at once, 1,000 times over, also while the replica lags behind it', async () => {
    const direct = createPool(replica.url(t.config.databaseUrl), 1, createLogger('silent'));
    try {
      const before = await routed();
      // As the replica streams on loopback: it often has the write by the time the read comes.
      for (let i = 0; i < 500; i++) {
        await rename(`Van ${i}`);
        expect(await nameOf(company.key)).toBe(`Van ${i}`);
      }
      const streaming = await routed();
      // Now it applies every commit 50 ms late, still well within the lag limit: it is in use,
      // and lacks every fresh write while the key reads it back.
      await setApplyDelay('50ms');
      let replicaStale = 0;
      for (let i = 500; i < 1000; i++) {
        await rename(`Van ${i}`);
        expect(await nameOf(company.key)).toBe(`Van ${i}`);
        if ((await onReplica(direct)) !== `Van ${i}`) replicaStale++;
      }
      const delayed = await routed();
      console.info(
        `read-your-writes: 1,000 of 1,000 fresh; reads on the replica ${streaming.replica - before.replica} of 500 ` +
          `streaming, ${delayed.replica - streaming.replica} of 500 with a 50 ms apply delay, during which the ` +
          `replica itself lacked the write ${replicaStale} times`,
      );
      expect(replicaStale).toBeGreaterThan(400);
      // Meanwhile a key without writes kept reading from the replica.
      const reader = await routed();
      expect(await nameOf(readerKey)).toMatch(/^Van \d+$/);
      expect((await routed()).replica).toBe(reader.replica + 1);
    } finally {
      await setApplyDelay(null);
      await direct.end();
    }
  }, 180_000);

  it('moves reads to the primary while the replica lags past the limit, and back when it catches up', async () => {
    await replica.caughtUp(inject('postgresUrl'));
    await until('replica in use', inUse);
    await replica.query('SELECT pg_wal_replay_pause()');
    try {
      // The primary moves on; the paused replica does not.
      await rename('Written while the replica is paused');
      await until('replica skipped as lagging', async () => !(await inUse()));
      expect(await replicaState()).toBe('lagging');
      const before = await routed();
      // The key that never wrote sees the new name: its reads went to the primary.
      expect(await nameOf(readerKey)).toBe('Written while the replica is paused');
      const after = await routed();
      expect(after).toEqual({ primary: before.primary + 1, replica: before.replica });
    } finally {
      await replica.query('SELECT pg_wal_replay_resume()');
    }
    await until('replica in use again', inUse);
    const before = await routed();
    expect(await nameOf(readerKey)).toBe('Written while the replica is paused');
    expect((await routed()).replica).toBe(before.replica + 1);
  }, 60_000);

  it('fails no request when the replica stops under load', async () => {
    await until('replica in use', inUse);
    const before = await routed();
    const statuses = new Map<number, number>();
    let stopped = false;
    const deadline = Date.now() + 6000;
    const client = async () => {
      while (Date.now() < deadline) {
        const single = await t.api('GET', `/vehicles/${vehicleId}`, readerKey);
        const list = await t.api('GET', '/vehicles?include_total=true', readerKey);
        for (const response of [single, list]) {
          statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1);
        }
      }
    };
    const stop = async () => {
      await new Promise((resolve) => setTimeout(resolve, 2000));
      const during = await routed();
      expect(during.replica).toBeGreaterThan(before.replica);
      // A crash, not a clean shutdown: connections drop mid-query.
      await replica.stop('immediate');
      stopped = true;
    };
    await Promise.all([...Array.from({ length: 8 }, client), stop()]);
    expect(stopped).toBe(true);
    const after = await routed();
    console.info(
      `replica stopped under load: responses ${JSON.stringify(Object.fromEntries(statuses))}, reads on the replica ` +
        `${after.replica - before.replica}, on the primary ${after.primary - before.primary}, ` +
        `retried on the primary ${await fallbacks()}`,
    );
    expect([...statuses.keys()]).toEqual([200]);
    expect(after.primary).toBeGreaterThan(before.primary);
    expect(await inUse()).toBe(false);
    expect(await replicaState()).toBe('unreachable');
  }, 60_000);
});
