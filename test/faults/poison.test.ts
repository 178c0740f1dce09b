/**
 * Poison pushes (issue 8, point 1) from one tenant's connection, interleaved with good pushes from
 * the same connection and from another tenant, through real API and worker processes. What
 * Postgres cannot store (a year-0 time, NUL characters, ids and signal names past any index
 * limit) and what must not be stored (giant unknown values, keys named like the read model's own)
 * is rejected by the API or dropped or parked by the worker with a reason, and never blocks
 * anyone's other rows.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ProcessGroup, serviceEnv } from '../helpers/processes.js';
import {
  countReadings,
  createStreamConnection,
  planPushStream,
  signedGenericPush,
  type PlannedPush,
  type PushStreamPlan,
  type StreamConnection,
} from '../helpers/push-stream.js';

const goodPushes = 12;
const readingsPerPush = 10;
const start = new Date(Date.now() - 24 * 3600 * 1000);
/** How long the good readings may take to be stored; the worker needs a second or two. */
const settleTimeoutMs = 45_000;

interface PoisonAnswer {
  name: string;
  status: number;
  body: any;
}

const processes = new ProcessGroup();
let t: TestApp;
let poisoned: StreamConnection & { companyId: string; key: string };
let neighbour: StreamConnection & { companyId: string; key: string };
let goodA: PushStreamPlan;
let goodB: PushStreamPlan;
let trustedVehicleId: string;
let trustedOdometer: unknown;
const answers: PoisonAnswer[] = [];

/** 12,000 characters that do not compress, so no index can hold them. */
const huge = randomBytes(6000).toString('hex');

/** One signed push per poison input, all from `vehicle` (mapped) of the poisoned connection. */
function poisonBodies(vehicle: string): Array<{ name: string; body: string }> {
  const ts = new Date(start.getTime() + 3600 * 1000).toISOString();
  const one = (reading: Record<string, unknown>) =>
    JSON.stringify({ readings: [{ vehicle, ts, signals: { speed_kph: 10 }, ...reading }] });
  return [
    // Storable, but never to be stored: first, so they are not merely stuck behind the others.
    { name: 'a giant unknown-signal value', body: one({ signals: { blob: 'x'.repeat(1_000_000) } }) },
    {
      name: 'unknown keys named like the read model’s own',
      body: one({ signals: { odometer: 'hacked', observed_at: 'hacked' } }),
    },
    // What Postgres cannot store at all.
    { name: 'a time in year 0', body: one({ ts: '0000-01-01T00:00:00Z' }) },
    { name: 'NUL in a string value', body: one({ signals: { note: 'before\u0000after' } }) },
    { name: 'NUL in a vehicle id', body: one({ vehicle: `${vehicle}\u0000` }) },
    { name: 'NUL in a signal name', body: one({ signals: { 'speed\u0000_kph': 10 } }) },
    // A raw NUL byte, not the JSON escape: not JSON at all.
    {
      name: 'a raw NUL byte',
      body: `{"readings":[{"vehicle":"${vehicle}","ts":"${ts}","signals":{"note":"a\u0000b"}}]}`,
    },
    { name: 'a huge vehicle id', body: one({ vehicle: huge }) },
    { name: 'a huge signal name', body: one({ signals: { [huge]: 1 } }) },
  ];
}

async function pushGood(apiUrl: string, push: PlannedPush): Promise<void> {
  const response = await signedGenericPush(apiUrl, push);
  if (response.status !== 202) throw new Error(`good push answered ${response.status}: ${await response.text()}`);
}

beforeAll(async () => {
  t = await createTestApp();
  poisoned = await createStreamConnection(t, 'poisoned', 2);
  neighbour = await createStreamConnection(t, 'neighbour', 2);
  goodA = planPushStream([poisoned], { pushes: goodPushes, readingsPerPush, start });
  goodB = planPushStream([neighbour], { pushes: goodPushes, readingsPerPush, start });

  // The vehicle the poison targets has a trusted (manual) odometer that no pushed key may replace.
  const vehicles = (await t.api('GET', '/vehicles', poisoned.key)).json().data as Array<{ id: string; name: string }>;
  trustedVehicleId = vehicles.find((v) => v.name === poisoned.vehicles[0])!.id;
  const odometer = await t.api('PUT', `/vehicles/${trustedVehicleId}`, poisoned.key, { odometer_miles: 12_345 });
  expect(odometer.statusCode).toBe(200);
  trustedOdometer = odometer.json().data.signals.odometer;

  const api = await processes.start(['api'], serviceEnv(t));
  // Ingest only: the health stage rewrites the odometer from the trusted reading, which would hide
  // an overwrite by a pushed key.
  await processes.start(['worker', 'ingest'], serviceEnv(t));

  // Good, poison, other tenant's good, in turn; the poisoned connection's last pushes are all good.
  const poison = poisonBodies(poisoned.vehicles[0]!);
  for (let i = 0; i < goodPushes; i++) {
    await pushGood(api.url, goodA.pushes[i]!);
    const bad = poison[i];
    if (bad) {
      const response = await signedGenericPush(api.url, {
        connectionId: poisoned.id,
        secret: poisoned.secret,
        body: bad.body,
      });
      const text = await response.text();
      answers.push({ name: bad.name, status: response.status, body: text ? JSON.parse(text) : null });
    }
    await pushGood(api.url, goodB.pushes[i]!);
  }
}, 120_000);

afterAll(async () => {
  await processes.killAll();
  await t?.close();
});

let settled: Promise<{ poisoned: number; neighbour: number }> | undefined;

/** Waits (once) until every good reading is stored or the deadline passes; what was stored by then. */
function goodReadingsStored() {
  settled ??= (async () => {
    const deadline = Date.now() + settleTimeoutMs;
    for (;;) {
      const counts = {
        poisoned: (await countReadings(t.pool, goodA.readings)).matching,
        neighbour: (await countReadings(t.pool, goodB.readings)).matching,
      };
      const done = counts.poisoned === goodA.readings.length && counts.neighbour === goodB.readings.length;
      if (done || Date.now() > deadline) return counts;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  })();
  return settled;
}

describe('poison pushes from one tenant', () => {
  it('are answered 202 (stored for the worker) or 4xx with the error envelope, never 5xx', () => {
    expect(answers).toHaveLength(poisonBodies('x').length);
    const allowed = (status: number) => status === 202 || (status >= 400 && status < 500);
    expect(answers.filter((a) => !allowed(a.status)).map((a) => ({ name: a.name, status: a.status }))).toEqual([]);
    for (const answer of answers.filter((a) => a.status !== 202)) {
      expect(answer.body).toMatchObject({ success: false, error: { code: expect.any(String) } });
      expect(JSON.stringify(answer.body)).not.toMatch(/\bat .+:\d+:\d+/);
    }
  });

  it("leave the other tenant's ingestion running: all its readings are stored", async () => {
    expect((await goodReadingsStored()).neighbour).toBe(goodB.readings.length);
    expect(await countReadings(t.pool, goodB.readings)).toEqual({
      stored: goodB.readings.length,
      matching: goodB.readings.length,
    });
  }, 60_000);

  it("leave the poisoned connection's good pushes flowing, before and after the poison", async () => {
    expect((await goodReadingsStored()).poisoned).toBe(goodA.readings.length);
  }, 60_000);

  it('each accepted one is settled with its reason (parked, or its bad values dropped), never left owed', async () => {
    await goodReadingsStored();
    const accepted = answers.filter((a) => a.status === 202);
    const ids = accepted.map((a) => a.body.data.inbox_id as number);
    const { rows } = await t.pool.query<{ id: number; reason: boolean }>(
      `SELECT id::int, (error IS NOT NULL OR skipped_count > 0) AS reason FROM ingest_inbox WHERE id = ANY($1::bigint[])`,
      [ids],
    );
    const reasonById = new Map(rows.map((r) => [r.id, r.reason]));
    expect(accepted.map((a) => ({ name: a.name, reason: reasonById.get(a.body.data.inbox_id) }))).toEqual(
      accepted.map((a) => ({ name: a.name, reason: true })),
    );
    // Every other row of either connection is processed without error.
    const others = await t.pool.query(
      `SELECT count(*)::int AS n FROM ingest_inbox
       WHERE connection_id = ANY($1::uuid[]) AND id <> ALL($2::bigint[]) AND (processed_at IS NULL OR error IS NOT NULL)`,
      [[poisoned.id, neighbour.id], ids],
    );
    expect(others.rows[0].n).toBe(0);
  }, 60_000);

  it('never reach readings, the latest state or the read model; the trusted odometer stays', async () => {
    await goodReadingsStored();
    const { rows } = await t.pool.query(
      `SELECT count(*) FILTER (WHERE r.recorded_at < '2000-01-01')::int AS ancient,
              count(*) FILTER (WHERE length(r.signal) > 1000)::int AS huge_names,
              count(*) FILTER (WHERE r.signal = 'blob')::int AS giant_values
       FROM readings r JOIN vehicles v ON v.id = r.vehicle_id WHERE v.provider_connection_id = $1`,
      [poisoned.id],
    );
    expect(rows[0]).toEqual({ ancient: 0, huge_names: 0, giant_values: 0 });
    const unmapped = await t.pool.query(
      `SELECT count(*)::int AS n FROM unmapped_vehicles WHERE connection_id = $1 AND length(provider_vehicle_id) > 1000`,
      [poisoned.id],
    );
    expect(unmapped.rows[0].n).toBe(0);
    const reserved = await t.pool.query(
      `SELECT signals -> 'observed_at' ?| ARRAY['odometer', 'observed_at'] AS observed FROM vehicles WHERE id = $1`,
      [trustedVehicleId],
    );
    expect(reserved.rows).toEqual([{ observed: false }]);

    const vehicle = await t.api('GET', `/vehicles/${trustedVehicleId}`, poisoned.key);
    expect(vehicle.statusCode).toBe(200);
    const signals = vehicle.json().data.signals;
    expect(signals.odometer).toEqual(trustedOdometer);
    expect(signals.blob).toBeUndefined();
    // The good readings reached this read model; every time in it is a sane one.
    expect(signals.observed_at).toMatchObject({ speed_kph: expect.any(String), fuel_percent: expect.any(String) });
    const insane = Object.entries(signals.observed_at as Record<string, string>).filter(
      ([, at]) => !(new Date(at).getUTCFullYear() >= 2000),
    );
    expect(insane).toEqual([]);
  }, 60_000);
});
