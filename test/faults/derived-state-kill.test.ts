/**
 * kill -9 of each kind of process (the API, the ingest worker, the health worker) in the middle
 * of a burst of signed pushes, one push per vehicle, with a replacement started as a supervisor
 * would: every accepted push's derived state is there within 30 s of the burst's end. Derived
 * state is what the health stage makes of the push: the trusted odometer on GET vehicle, the
 * alert of the push's new trouble code, and the monitoring event of that alert delivered to a
 * receiver. Each kind is killed at random points of a burst, a worker while it holds jobs; the
 * ingest worker also exactly between its batches' commit and the enqueue of their evaluations
 * (Redis holds writes while the batches commit), which only the relay of owed evaluations can
 * recover from.
 *
 * Real processes on a redis-server of this test's own (CLIENT PAUSE is server-wide).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { v1 } from '../helpers/monitoring.js';
import { ProcessGroup, serviceEnv, type RedisServer, type ServiceProcess } from '../helpers/processes.js';
import {
  createStreamConnection,
  startPushStream,
  type PlannedPush,
  type RunningPushStream,
} from '../helpers/push-stream.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

const vehicleCount = 120;
/** From the end of a burst until every push's derived state shows (issue 16). */
const derivedStateDeadlineMs = 30_000;
/** The relay's interval in the services: a crash's owed evaluations follow within about twice this. */
const relayIntervalMs = 1000;

const services = new ProcessGroup();
const redisServer = new ProcessGroup();
let redis: RedisServer;
let t: TestApp;
let receiver: Receiver;
let fleet: { key: string; connectionId: string; secret: string; vehicles: Array<{ id: string; providerId: string }> };
const running: Record<'api' | 'ingest' | 'health', ServiceProcess | null> = { api: null, ingest: null, health: null };
let bursts = 0;

const env = () =>
  serviceEnv(t, {
    REDIS_URL: redis.url,
    WEBHOOK_ALLOW_NETS: '127.0.0.1/32',
    HEALTH_RELAY_INTERVAL_MS: String(relayIntervalMs),
  });
const processArgs = { api: ['api'], ingest: ['worker', 'ingest'], health: ['worker', 'health'] } as const;

/** kill -9, and a replacement at once (the API on the same address, where the pusher retries). */
async function killAndReplace(kind: keyof typeof running): Promise<void> {
  const killed = running[kind]!;
  await killed.kill();
  running[kind] = await services.start([...processArgs[kind]], env(), kind === 'api' ? killed.port : undefined);
}

beforeAll(async () => {
  redis = await redisServer.startRedis();
  t = await createTestApp({
    REDIS_URL: redis.url,
    WEBHOOK_ALLOW_NETS: '127.0.0.1/32',
    // The checks read every vehicle over the API many times a second.
    RATE_LIMIT_PER_MINUTE: '10000000',
  });
  receiver = await startReceiver();
  const stream = await createStreamConnection(t, 'derived', vehicleCount);
  const { rows } = await t.pool.query<{ id: string; providerId: string }>(
    `SELECT id, provider_vehicle_id AS "providerId" FROM vehicles WHERE provider_connection_id = $1 ORDER BY provider_vehicle_id`,
    [stream.id],
  );
  fleet = { key: stream.key, connectionId: stream.id, secret: stream.secret, vehicles: rows };
  for (const vehicle of fleet.vehicles) {
    const subscribed = await v1(t, 'POST', '/runs/subscribe', fleet.key, {
      vehicle_id: vehicle.id,
      webhook_url: `${receiver.url}/monitoring/${vehicle.id}`,
      events: ['check_engine_light'],
    });
    expect(subscribed.statusCode, subscribed.body).toBe(201);
  }
  [running.api, running.ingest, running.health] = await Promise.all([
    services.start([...processArgs.api], env()),
    services.start([...processArgs.ingest], env()),
    services.start([...processArgs.health], env()),
    services.start(['worker', 'webhooks'], env()),
  ]);
}, 180_000);
afterAll(async () => {
  try {
    await services.killAll();
    await receiver?.close();
    await t?.close();
  } finally {
    await redisServer.killAll();
  }
});

type Vehicle = (typeof fleet.vehicles)[number];

interface Burst {
  code: string;
  odometerKm: number;
  vehicles: Vehicle[];
  pushes: PlannedPush[];
}

/** Each burst a new trouble code on each of its vehicles, and the odometer 10 km further. */
function burstOf(n: number, vehicles: Vehicle[]): Burst {
  const code = `P03${String(n).padStart(2, '0')}`;
  const odometerKm = 20_000 + n * 10;
  const ts = new Date().toISOString();
  const pushes = vehicles.map((vehicle) => ({
    connectionId: fleet.connectionId,
    secret: fleet.secret,
    body: JSON.stringify({
      readings: [{ vehicle: vehicle.providerId, ts, signals: { odometer_km: odometerKm, dtcs: [{ code }] } }],
    }),
  }));
  return { code, odometerKm, vehicles, pushes };
}

/** The vehicles (provider ids, with what is missing) whose derived state of this burst does not show yet. */
function missingDerivedState(burst: Burst) {
  const complete = new Set<string>();
  return async (): Promise<string[]> => {
    const missing: string[] = [];
    for (const vehicle of burst.vehicles.filter((v) => !complete.has(v.id))) {
      const response = await t.api('GET', `/vehicles/${vehicle.id}`, fleet.key);
      expect(response.statusCode, response.body).toBe(200);
      const data = response.json().data;
      const lacks = [
        data.signals.odometer?.km === burst.odometerKm ? null : 'odometer',
        data.health.alerts.some((a: { display_name: string | null }) => a.display_name?.endsWith(burst.code))
          ? null
          : 'alert',
        receiver.received.some(
          (r) => r.path === `/monitoring/${vehicle.id}` && r.json?.details?.description?.includes(burst.code),
        )
          ? null
          : 'event',
      ].filter((what) => what !== null);
      if (lacks.length === 0) complete.add(vehicle.id);
      else missing.push(`${vehicle.providerId}: ${lacks.join(', ')}`);
    }
    return missing;
  };
}

/** A burst of one push per vehicle, `kill` run while it goes on; then the deadline for its derived state. */
async function burstWithKill(
  label: string,
  kill: (stream: RunningPushStream, pushes: number) => Promise<void>,
  vehicles: Vehicle[] = fleet.vehicles,
) {
  const burst = burstOf(++bursts, vehicles);
  const stream = startPushStream(burst.pushes, { apiUrl: () => running.api!.url });
  await kill(stream, burst.pushes.length);
  expect((await stream.done).accepted).toBe(burst.pushes.length);
  const endedAt = Date.now();
  await expect.poll(missingDerivedState(burst), { timeout: derivedStateDeadlineMs, interval: 500 }).toEqual([]);
  console.info(
    `${label}: every derived state of burst ${bursts} ${((Date.now() - endedAt) / 1000).toFixed(1)} s after it`,
  );
}

/** Somewhere between `from` and `to` (shares) of the burst accepted. */
function randomPoint(pushes: number, from = 0.2, to = 0.67): number {
  return Math.floor(pushes * (from + Math.random() * (to - from)));
}

/** At a random point, once the worker holds jobs of its queue (their transactions open or committing). */
const killWorkerAt =
  (kind: 'ingest' | 'health') =>
  async (stream: RunningPushStream, pushes: number): Promise<void> => {
    await stream.until(randomPoint(pushes));
    await expect.poll(() => t.queues.queue(kind).getActiveCount(), { timeout: 20_000, interval: 5 }).toBeGreaterThan(0);
    await killAndReplace(kind);
  };

describe('kill -9 mid-burst: every accepted push’s derived state within 30 s', () => {
  it('of the API, twice in a burst at random points', async () => {
    await burstWithKill('api kill', async (stream, pushes) => {
      await stream.until(randomPoint(pushes, 0.1, 0.4));
      await killAndReplace('api');
      await stream.until(randomPoint(pushes, 0.5, 0.8));
      await killAndReplace('api');
    });
  }, 120_000);

  it('of the API between pushes’ commit and their enqueue, at the end of a burst', async () => {
    const lanes = fleet.vehicles.slice(0, 8);
    const startedAt = new Date();
    // The pushes stop at their inbox insert while Redis is made to hold writes; then they commit
    // and their enqueue hangs. Their retries, to the replacement, are duplicates of stored rows.
    const blocker = await t.pool.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE ingest_inbox IN SHARE MODE');
      await burstWithKill(
        'api kill after commit',
        async (_stream, pushes) => {
          try {
            await expect.poll(pushesWaitingOnInbox, { timeout: 20_000, interval: 20 }).toBe(pushes);
            await redis.client.call('CLIENT', 'PAUSE', '30000', 'WRITE');
            await blocker.query('COMMIT');
            await expect.poll(() => storedSince(startedAt), { timeout: 20_000, interval: 20 }).toBe(pushes);
            await running.api!.kill();
          } finally {
            await redis.client.call('CLIENT', 'UNPAUSE');
          }
          running.api = await services.start([...processArgs.api], env(), running.api!.port);
        },
        lanes,
      );
    } finally {
      await blocker.query('ROLLBACK');
      blocker.release();
    }
    // Nothing was stored twice: each retry was answered as a duplicate of its stored row.
    expect(await storedSince(startedAt)).toBe(lanes.length);
  }, 120_000);

  it('of the health worker while it evaluates', async () => {
    await burstWithKill('health kill', killWorkerAt('health'));
  }, 120_000);

  it('of the ingest worker while it holds batches', async () => {
    await burstWithKill('ingest kill', killWorkerAt('ingest'));
  }, 120_000);

  it('of the ingest worker between its batches’ commit and their enqueue: the relay enqueues what they owe', async () => {
    let owedAtKill: number[] = [];
    await burstWithKill('ingest kill after commit', async (stream, pushes) => {
      await stream.until(randomPoint(pushes));
      // The batches in flight stop on the vehicle rows (after their readings, inside their
      // transactions) while Redis is made to hold writes; then they commit and their enqueue hangs.
      const blocker = await t.pool.connect();
      try {
        await blocker.query('BEGIN');
        // In id order, as every writer of vehicle rows locks them (db/vehicle-state.ts): no deadlock.
        await blocker.query('SELECT 1 FROM vehicles WHERE provider_connection_id = $1 ORDER BY id FOR UPDATE', [
          fleet.connectionId,
        ]);
        await expect.poll(batchesWaitingOnVehicles, { timeout: 20_000, interval: 20 }).toBeGreaterThan(0);
        await redis.client.call('CLIENT', 'PAUSE', '30000', 'WRITE');
        await blocker.query('COMMIT');
      } finally {
        blocker.release();
      }
      try {
        // No new batch can start (taking a job writes to Redis): every batch in flight commits.
        await expect.poll(batchesWaitingOnVehicles, { timeout: 20_000, interval: 20 }).toBe(0);
        await expect.poll(owedIds, { timeout: 20_000, interval: 20 }).not.toEqual([]);
        owedAtKill = await owedIds();
        await running.ingest!.kill();
      } finally {
        await redis.client.call('CLIENT', 'UNPAUSE');
      }
      running.ingest = await services.start([...processArgs.ingest], env());
    });
    // What the killed batches owed was enqueued by the relay (their own enqueue never came), and deleted.
    const { rows } = await t.pool.query(`SELECT id FROM health_evaluations_owed WHERE id = ANY($1::bigint[])`, [
      owedAtKill,
    ]);
    expect(rows).toEqual([]);
  }, 120_000);
});

/** Ingest batches waiting on vehicle rows (db/vehicle-state.ts lockVehiclesForState; the health stage's lock reads otherwise). */
async function batchesWaitingOnVehicles(): Promise<number> {
  const { rows } = await t.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'
       AND query LIKE 'SELECT id FROM vehicles WHERE id = ANY(%FOR NO KEY UPDATE'`,
  );
  return rows[0]!.n;
}

/** Pushes waiting to insert into the inbox (held by the test's table lock). */
async function pushesWaitingOnInbox(): Promise<number> {
  const { rows } = await t.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'
       AND query LIKE '%INSERT INTO ingest_inbox%'`,
  );
  return rows[0]!.n;
}

async function storedSince(since: Date): Promise<number> {
  const { rows } = await t.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ingest_inbox WHERE connection_id = $1 AND received_at >= $2`,
    [fleet.connectionId, since],
  );
  return rows[0]!.n;
}

async function owedIds(): Promise<number[]> {
  const { rows } = await t.pool.query<{ id: number }>(`SELECT id FROM health_evaluations_owed ORDER BY id`);
  return rows.map((r) => r.id);
}
