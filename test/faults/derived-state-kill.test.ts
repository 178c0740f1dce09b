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
 * Each case that kills at random moments runs in `rounds` rounds: one burst after another, each
 * on its own share of the fleet with its own kill, the waits for their derived state overlapping
 * (a health worker's dead jobs come back only when their 10 s lock runs out). The services run on
 * the shipped settings, HEALTH_RELAY_INTERVAL_MS (5 s) among them, so the 30 s hold for the
 * defaults. Real processes on a redis-server of this test's own (CLIENT PAUSE is server-wide).
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
/** Rounds of each case that kills at random moments. */
const rounds = 3;

const services = new ProcessGroup();
const redisServer = new ProcessGroup();
let redis: RedisServer;
let t: TestApp;
let receiver: Receiver;
let fleet: { key: string; connectionId: string; secret: string; vehicles: Array<{ id: string; providerId: string }> };
const running: Record<'api' | 'ingest' | 'health', ServiceProcess | null> = { api: null, ingest: null, health: null };
let bursts = 0;

const env = () => serviceEnv(t, { REDIS_URL: redis.url, WEBHOOK_ALLOW_NETS: '127.0.0.1/32' });
const processArgs = { api: ['api'], ingest: ['worker', 'ingest'], health: ['worker', 'health'] } as const;

/** When each kind's running process was started: a job it holds went active after this. */
const startedAt: Record<keyof typeof running, number> = { api: 0, ingest: 0, health: 0 };

/** A replacement of a killed process, as a supervisor would start it (the API on the same address, where the pusher retries). */
async function replace(kind: keyof typeof running, port?: number): Promise<void> {
  startedAt[kind] = Date.now();
  running[kind] = await services.start([...processArgs[kind]], env(), port);
}

/** kill -9, and a replacement at once. */
async function killAndReplace(kind: keyof typeof running): Promise<void> {
  const killed = running[kind]!;
  await killed.kill();
  await replace(kind, kind === 'api' ? killed.port : undefined);
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

type Kill = (stream: RunningPushStream, pushes: number) => Promise<void>;

/**
 * A burst of one push per vehicle, `kill` run while it goes on. Answers once the burst is over,
 * with the wait for its derived state already running (its deadline counts from the burst's end),
 * so that the waits of several bursts overlap.
 */
async function burstWithKill(label: string, kill: Kill, vehicles: Vehicle[]): Promise<{ settled: Promise<void> }> {
  const burst = burstOf(++bursts, vehicles);
  const n = bursts;
  const stream = startPushStream(burst.pushes, { apiUrl: () => running.api!.url });
  await kill(stream, burst.pushes.length);
  expect((await stream.done).accepted).toBe(burst.pushes.length);
  const endedAt = Date.now();
  const settled = expect
    .poll(missingDerivedState(burst), { timeout: derivedStateDeadlineMs, interval: 250 })
    .toEqual([])
    .then(() =>
      console.info(
        `${label}: every derived state of burst ${n} ${((Date.now() - endedAt) / 1000).toFixed(1)} s after it`,
      ),
    );
  // Observed at once: a miss surfaces where the caller awaits it, not as an unhandled rejection meanwhile.
  settled.catch(() => {});
  return { settled };
}

/** `rounds` bursts one after another, each on its own share of the fleet with a kill of its own. */
async function inRounds(label: string, kill: (round: number) => Kill): Promise<void> {
  const share = Math.floor(fleet.vehicles.length / rounds);
  const waits: Array<Promise<void>> = [];
  for (let round = 0; round < rounds; round++) {
    const vehicles = fleet.vehicles.slice(round * share, (round + 1) * share);
    waits.push((await burstWithKill(`${label}, round ${round + 1}`, kill(round), vehicles)).settled);
  }
  for (const wait of waits) await wait;
}

/** Somewhere between `from` and `to` (shares) of the burst accepted. */
function randomPoint(pushes: number, from = 0.2, to = 0.67): number {
  return Math.floor(pushes * (from + Math.random() * (to - from)));
}

/** The job of each worker kind that carries a push's derived state. */
const pushJobs = { ingest: 'ingest.drain', health: 'health.evaluate' } as const;

/**
 * At a random point, once the running worker holds jobs of the pushes (their transactions open or
 * committing): jobs that went active since it started, not those of a worker killed before it.
 */
const killWorkerAt =
  (kind: 'ingest' | 'health') =>
  async (stream: RunningPushStream, pushes: number): Promise<void> => {
    await stream.until(randomPoint(pushes));
    const holdsJobs = async () =>
      (await t.queues.queue(kind).getJobs(['active'])).some(
        (job) => job.name === pushJobs[kind] && (job.processedOn ?? 0) >= startedAt[kind],
      );
    await expect.poll(holdsJobs, { timeout: 20_000, interval: 5 }).toBe(true);
    await killAndReplace(kind);
  };

describe('kill -9 mid-burst: every accepted push’s derived state within 30 s', () => {
  it('of the API, twice in a burst at random points', async () => {
    await inRounds('api kill', () => async (stream, pushes) => {
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
      const { settled } = await burstWithKill(
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
          await replace('api', running.api!.port);
        },
        lanes,
      );
      await settled;
    } finally {
      await blocker.query('ROLLBACK');
      blocker.release();
    }
    // Nothing was stored twice: each retry was answered as a duplicate of its stored row.
    expect(await storedSince(startedAt)).toBe(lanes.length);
  }, 120_000);

  it('of the health worker while it evaluates', async () => {
    await inRounds('health kill', () => killWorkerAt('health'));
  }, 120_000);

  it('of the ingest worker while it holds batches', async () => {
    await inRounds('ingest kill', () => killWorkerAt('ingest'));
  }, 120_000);

  it('of the ingest worker between its batches’ commit and their enqueue: the relay enqueues what they owe', async () => {
    const owedAtKill: number[] = [];
    await inRounds('ingest kill after commit', () => async (stream, pushes) => {
      await stream.until(randomPoint(pushes));
      // Rows an earlier round's kill left to the relay are not this round's.
      const earlier = new Set(await owedIds());
      const owedNow = async () => (await owedIds()).filter((id) => !earlier.has(id));
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
        await expect.poll(owedNow, { timeout: 20_000, interval: 20 }).not.toEqual([]);
        owedAtKill.push(...(await owedNow()));
        await running.ingest!.kill();
      } finally {
        await redis.client.call('CLIENT', 'UNPAUSE');
      }
      await replace('ingest');
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
