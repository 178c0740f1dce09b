/**
 * Coalesced ingest jobs: pushes wake per-shard drain jobs (`ingest.drain`) that claim pending
 * inbox rows in batches, so a burst costs a handful of BullMQ jobs rather than one per push, and
 * the queue's depth follows the inbox. On a private redis-server, which the second test flushes
 * mid-burst: the recovery sweep wakes the drains of what the lost jobs owed, and nothing is lost.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recoverInbox } from '../../src/ingest/recover.js';
import { enqueueGraceMs } from '../../src/queue/after-commit.js';
import { drainShards } from '../../src/queue/enqueue-ingest.js';
import { createLogger } from '../../src/log.js';
import type { RunningWorkers } from '../../workers/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createConnection, drainInbox, pushGeneric } from '../helpers/ingest.js';
import { ProcessGroup, type RedisServer } from '../helpers/processes.js';

const processes = new ProcessGroup();
let redis: RedisServer;
let t: TestApp;
let acme: { id: string; key: string };
let connection: { id: string; secret: string };
let workers: RunningWorkers;
const vehicleNames = Array.from({ length: 10 }, (_, i) => `drain-${i}`);
const vehicleIds: Record<string, string> = {};

beforeAll(async () => {
  redis = await processes.startRedis();
  t = await createTestApp({ REDIS_URL: redis.url });
  acme = await t.createCompany();
  const created = await createConnection(t, acme.id, 'generic');
  connection = { id: created.id, secret: created.generated_secret! };
  for (const name of vehicleNames) {
    const vehicle = await t.createVehicle(acme.id, {
      provider_connection_id: connection.id,
      provider_vehicle_id: name,
    });
    vehicleIds[name] = vehicle.id;
  }
  workers = await t.startWorkers(['ingest']);
}, 60_000);
afterAll(async () => {
  await workers?.close();
  await t?.close();
  await processes.killAll();
});

/**
 * `count` pushes, 20 at a time, round robin over the vehicles, each with a later time than the
 * vehicle's previous one and its fuel equal to its index; `onAccepted` sees each accepted count.
 */
async function burst(
  count: number,
  firstMinute: number,
  onAccepted: (accepted: number) => Promise<void> = async () => {},
): Promise<void> {
  let next = 0;
  let accepted = 0;
  await Promise.all(
    Array.from({ length: 20 }, async () => {
      while (next < count) {
        const i = next++;
        const vehicle = vehicleNames[i % vehicleNames.length]!;
        const ts = new Date(Date.UTC(2026, 10, 20) + (firstMinute + i) * 60_000).toISOString();
        const response = await pushGeneric(t, 'generic', connection.id, connection.secret, {
          readings: [{ vehicle, ts, signals: { fuel_percent: i % 100, speed_kph: 40 } }],
        });
        expect(response.statusCode).toBe(202);
        await onAccepted(++accepted);
      }
    }),
  );
}

async function drainJobsFinished(): Promise<number> {
  const jobs = await t.queues.queue('ingest').getJobs(['completed', 'failed']);
  return jobs.filter((job) => job.name === 'ingest.drain').length;
}

async function unprocessedRows(): Promise<number> {
  const { rows } = await t.pool.query(`SELECT count(*)::int AS n FROM ingest_inbox WHERE processed_at IS NULL`);
  return rows[0].n;
}

async function readings(): Promise<number> {
  const { rows } = await t.pool.query(`SELECT count(*)::int AS n FROM readings`);
  return rows[0].n;
}

/** Each vehicle shows the fuel of its last push: rows were applied in order per vehicle. */
async function expectLatestFuel(lastIndex: number): Promise<void> {
  for (let v = 0; v < vehicleNames.length; v++) {
    const last = lastIndex - ((lastIndex - v + vehicleNames.length) % vehicleNames.length);
    const vehicle = (await t.api('GET', `/vehicles/${vehicleIds[vehicleNames[v]!]}`, acme.key)).json().data;
    expect(vehicle.signals.fuel_percent).toBe(last % 100);
  }
}

describe('a burst of 500 pushes', () => {
  it('costs a few dozen drain jobs, keeps the queue shallow, and processes every row in order per vehicle', async () => {
    let deepest = 0;
    const queue = t.queues.queue('ingest');
    await burst(500, 0, async () => {
      const counts = await queue.getJobCounts('waiting', 'active', 'prioritized', 'delayed');
      deepest = Math.max(
        deepest,
        Object.values(counts).reduce((sum, n) => sum + n, 0),
      );
    });
    await drainInbox(t, 30_000);
    expect(await unprocessedRows()).toBe(0);
    expect(await readings()).toBe(1000);
    await expectLatestFuel(499);
    // One job per push before: 500. A queued and a following run per shard at most, at any time.
    const finished = await drainJobsFinished();
    expect(finished).toBeGreaterThan(0);
    expect(finished).toBeLessThan(150);
    expect(deepest).toBeLessThanOrEqual(2 * drainShards + 1);
  }, 60_000);
});

describe('Redis flushed mid-burst', () => {
  it('loses no accepted push: later pushes and the recovery sweep wake the drains', async () => {
    let flushed = false;
    await burst(500, 1000, async (accepted) => {
      if (accepted === 250 && !flushed) {
        flushed = true;
        await redis.client.flushall();
      }
    });
    expect(flushed).toBe(true);
    // Rows whose drains the flush took may be left; the sweep (a minute on, past its grace) wakes them.
    const later = new Date(Date.now() + enqueueGraceMs + 1000);
    await recoverInbox({ pool: t.pool, queues: t.queues, now: () => later, log: createLogger('silent') });
    await drainInbox(t, 30_000);
    expect(await unprocessedRows()).toBe(0);
    expect(await readings()).toBe(2000);
    await expectLatestFuel(499);
  }, 60_000);

  it('leaves rows stored with no drain at all to the recovery sweep', async () => {
    await workers.close();
    await burst(40, 2000);
    await redis.client.flushall();
    workers = await t.startWorkers(['ingest']);
    // Nothing queued wakes them: they wait for the sweep.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await unprocessedRows()).toBe(40);
    const later = new Date(Date.now() + enqueueGraceMs + 1000);
    expect(
      await recoverInbox({ pool: t.pool, queues: t.queues, now: () => later, log: createLogger('silent') }),
    ).toEqual({ requeued: 40 });
    await drainInbox(t, 30_000);
    expect(await readings()).toBe(2080);
  }, 60_000);
});
