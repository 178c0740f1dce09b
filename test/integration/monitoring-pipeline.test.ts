/**
 * Monitoring through the real ingest path (issue 9): signed generic pushes → ingest worker →
 * health evaluation with the monitoring stage → stored events → delivery lanes → a real receiver
 * on 127.0.0.1 that verifies X-Service-Signature. Every kind fires once per episode and re-arms;
 * a late sample fires nothing; a geofence crossed between two sparse fixes; a tier gets only the
 * kinds it covers.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { monitoringKinds, tierKinds } from '../../src/domain/monitoring-kinds.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createConnection, pushGeneric, settle } from '../helpers/ingest.js';
import { v1 } from '../helpers/monitoring.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

const milesToKm = (miles: number) => miles * 1.609344;
/** Readings start a little after the subscriptions exist (detectors read nothing older than them). */
const t0 = Date.now() + 60_000;
const at = (seconds: number) => new Date(t0 + seconds * 1000);
let clock = new Date(t0);

let t: TestApp;
let receiver: Receiver;
let acme: { id: string; key: string };
let connection: { id: string; secret: string };
let depot: string;
let nextVehicle = 0;

beforeAll(async () => {
  t = await createTestApp({ WEBHOOK_ALLOW_NETS: '127.0.0.1/32' }, () => clock);
  receiver = await startReceiver();
  acme = await t.createCompany();
  const created = await createConnection(t, acme.id, 'generic');
  connection = { id: created.id, secret: created.generated_secret! };
  const fence = await v1(t, 'POST', '/geofences', acme.key, {
    name: 'Depot',
    area: { type: 'Circle', center: { lat: 52.52, lon: 13.4 }, radius_m: 300 },
  });
  expect(fence.statusCode, fence.body).toBe(201);
  depot = fence.json().data.id;
  await t.startWorkers(['ingest', 'health', 'webhooks'], () => clock);
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

async function trackedVehicle() {
  const providerVehicleId = `m-${++nextVehicle}`;
  const vehicle = await t.createVehicle(acme.id, {
    provider_connection_id: connection.id,
    provider_vehicle_id: providerVehicleId,
  });
  return { id: vehicle.id as string, providerVehicleId };
}

async function subscribe(vehicleId: string, body: Record<string, unknown>) {
  const response = await v1(t, 'POST', '/runs/subscribe', acme.key, {
    vehicle_id: vehicleId,
    webhook_url: `${receiver.url}/hooks/${vehicleId}`,
    ...body,
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data as { id: string; signing_secret: string };
}

type Reading = [number, Record<string, unknown>];

/** One signed push of readings at t0 + seconds; the workers' clock moves on to the last one, then everything settles. */
async function push(vehicle: string, readings: Reading[]) {
  const last = at(Math.max(...readings.map(([s]) => s)) + 1);
  if (last.getTime() > clock.getTime()) clock = last;
  const response = await pushGeneric(t, 'generic', connection.id, connection.secret, {
    readings: readings.map(([s, signals]) => ({ vehicle, ts: at(s).toISOString(), signals })),
  });
  expect(response.statusCode, response.body).toBe(202);
  await settle(t);
}

async function storedKinds(subscriptionId: string): Promise<string[]> {
  const { rows } = await t.pool.query<{ kind: string }>(
    `SELECT kind FROM monitoring_events WHERE subscription_id = $1 ORDER BY occurred_at, kind`,
    [subscriptionId],
  );
  return rows.map((r) => r.kind);
}

function countByKind(kinds: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const kind of kinds) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
}

function verified(secret: string, raw: Buffer, header: string | undefined): boolean {
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`);
  const given = Buffer.from(header ?? '');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Lon of the parking and speeding fixes: east of the depot, so the road there never crosses the fence. */
const lonAway = 13.45;

/**
 * One episode of every kind, starting `base` seconds after t0 with the odometer at `miles`
 * (the last oil change done at `miles - 4499`, 501 mi before its 5,000 mi interval ends, so it comes
 * due soon, within 500 mi, 2 mi later).
 */
async function everyEpisode(vehicle: string, base: number, miles: number) {
  const s = (seconds: number) => base + seconds;
  const away = (lat: number) => ({ lat, lon: lonAway, heading: 0 });
  await push(vehicle, [
    [
      s(0),
      {
        odometer_km: milesToKm(miles),
        engine_state: 'on',
        speed_kph: 0,
        location: away(52.5),
        battery_voltage: 13.8,
        coolant_temp_c: 90,
        fuel_percent: 50,
        tire_pressure_kpa: { front_left: 240, front_right: 240, rear_left: 240, rear_right: 240 },
        brake_lining_percent: 80,
        dtcs: [],
      },
    ],
    [s(30), { speed_kph: 0, location: away(52.5) }],
  ]);
  // Idling: engine on, standing still for the 1-minute threshold.
  await push(vehicle, [[s(65), { speed_kph: 0, location: away(52.5) }]]);
  // Speeding over 100 km/h for more than 30 s, then through the depot fence.
  await push(vehicle, [
    [s(100), { speed_kph: 130, location: away(52.505) }],
    [s(115), { speed_kph: 130 }],
    [s(135), { speed_kph: 130 }],
  ]);
  await push(vehicle, [[s(140), { speed_kph: 40, location: { lat: 52.52, lon: 13.4, heading: 0 } }]]);
  await push(vehicle, [[s(150), { speed_kph: 40, location: { lat: 52.53, lon: 13.4, heading: 0 } }]]);
  // Provider events: a collision, harsh braking, harsh acceleration, an airbag deployment.
  await push(vehicle, [
    [s(160), { events: [{ type: 'impact', g: 2 }] }],
    [s(200), { events: [{ type: 'hard_brake', g: -0.6 }] }],
    [s(230), { events: [{ type: 'hard_accel', g: 0.45 }] }],
    [s(260), { events: [{ type: 'airbag_deployment' }] }],
  ]);
  // Faults, wear, a low tire, low fuel, a hot engine; the odometer brings the oil change due soon.
  await push(vehicle, [
    [
      s(270),
      {
        odometer_km: milesToKm(miles + 2),
        fuel_percent: 10,
        coolant_temp_c: 108,
        tire_pressure_kpa: { front_left: 170, front_right: 240, rear_left: 240, rear_right: 240 },
        brake_lining_percent: 20,
        dtcs: [{ code: 'P0300' }, { code: 'C0035' }, { code: 'B0001' }, { code: 'P0700' }],
      },
    ],
    [s(300), { fuel_percent: 10, coolant_temp_c: 108 }],
  ]);
  await push(vehicle, [[s(340), { coolant_temp_c: 108 }]]);
  await push(vehicle, [[s(400), { fuel_percent: 10 }]]);
  // Parked with a weak battery for over 2 minutes.
  await push(vehicle, [[s(420), { engine_state: 'off', speed_kph: 0, battery_voltage: 12 }]]);
  await push(vehicle, [[s(480), { battery_voltage: 12 }]]);
  await push(vehicle, [[s(560), { battery_voltage: 12 }]]);
}

/** Every condition clears and stays clear long enough to re-arm; driving east, away from the fence. */
async function allClear(vehicle: string, vehicleId: string, base: number, miles: number) {
  const s = (seconds: number) => base + seconds;
  const healthy = {
    engine_state: 'on',
    speed_kph: 30,
    battery_voltage: 13.8,
    coolant_temp_c: 90,
    fuel_percent: 60,
    tire_pressure_kpa: { front_left: 240, front_right: 240, rear_left: 240, rear_right: 240 },
    brake_lining_percent: 80,
    dtcs: [],
  };
  await push(vehicle, [[s(0), { ...healthy, location: { lat: 52.53, lon: 13.5, heading: 90 } }]]);
  await push(vehicle, [[s(60), { ...healthy, location: { lat: 52.531, lon: 13.5, heading: 90 } }]]);
  await push(vehicle, [[s(200), { ...healthy, location: { lat: 52.532, lon: 13.5, heading: 90 } }]]);
  const entry = await t.admin('POST', `/vehicles/${vehicleId}/service-entries`, {
    type: 'oil_change',
    performed_at: new Date().toISOString(),
    odometer_miles: miles - 4499,
  });
  expect(entry.statusCode, entry.body).toBe(201);
  await push(vehicle, [[s(300), { speed_kph: 0, location: { lat: 52.5, lon: lonAway, heading: 0 } }]]);
}

describe('every kind through the real ingest path', () => {
  it('fires once per episode, re-arms after the condition clears, delivers each signed, and a standard subscription gets only its kinds', async () => {
    const v = await trackedVehicle();
    const oilAt = await t.admin('POST', `/vehicles/${v.id}/service-entries`, {
      type: 'oil_change',
      performed_at: new Date(t0 - 30 * 86_400_000).toISOString(),
      odometer_miles: 24_000 - 4499,
    });
    expect(oilAt.statusCode, oilAt.body).toBe(201);
    const premium = await subscribe(v.id, {
      tier: 'premium',
      events: monitoringKinds,
      options: { speed_limit_kph: 100, idle_minutes: 1, mileage_threshold_miles: 24_001, geofence_ids: [depot] },
    });
    const standard = await subscribe(v.id, { tier: 'standard', events: tierKinds.standard });

    await everyEpisode(v.providerVehicleId, 0, 24_000);
    const first = countByKind(await storedKinds(premium.id));
    expect(Object.keys(first).sort()).toEqual([...monitoringKinds].sort());
    expect(
      Object.values(first).every((n) => n === 1),
      JSON.stringify(first),
    ).toBe(true);

    // A late sample (before what the detectors read) over the limit for a minute fires nothing.
    await push(v.providerVehicleId, [
      [5, { speed_kph: 150 }],
      [40, { speed_kph: 150 }],
      [70, { speed_kph: 150 }],
    ]);
    expect(countByKind(await storedKinds(premium.id)).speed_limit_exceeded).toBe(1);

    await allClear(v.providerVehicleId, v.id, 1000, 24_010);
    await everyEpisode(v.providerVehicleId, 2000, 24_010);
    const second = countByKind(await storedKinds(premium.id));
    // The mileage threshold is crossed once, ever; every other kind re-armed and fired again.
    expect(second).toEqual(
      Object.fromEntries(monitoringKinds.map((kind) => [kind, kind === 'mileage_threshold' ? 1 : 2])),
    );

    const standardKinds = countByKind(await storedKinds(standard.id));
    expect(Object.keys(standardKinds).sort()).toEqual([...tierKinds.standard].sort());
    expect(
      Object.values(standardKinds).every((n) => n === 2),
      JSON.stringify(standardKinds),
    ).toBe(true);

    // Each event delivered once, signed over the exact bytes stored, with its event_id.
    const total = Object.values(second).reduce((sum, n) => sum + n, 0) + 2 * tierKinds.standard.length;
    await expect
      .poll(() => receiver.received.filter((r) => r.path === `/hooks/${v.id}`).length, { timeout: 20_000 })
      .toBe(total);
    const received = receiver.received.filter((r) => r.path === `/hooks/${v.id}`);
    const { rows } = await t.pool.query<{ id: string; body: string; subscription_id: string }>(
      `SELECT id, body, subscription_id FROM monitoring_events WHERE vehicle_id = $1`,
      [v.id],
    );
    const secrets = new Map([
      [premium.id, premium.signing_secret],
      [standard.id, standard.signing_secret],
    ]);
    for (const request of received) {
      const stored = rows.find((row) => row.id === request.json.event_id)!;
      expect(request.rawBody.toString('utf8')).toBe(stored.body);
      expect(
        verified(
          secrets.get(stored.subscription_id)!,
          request.rawBody,
          request.headers['x-service-signature'] as string,
        ),
      ).toBe(true);
      expect(request.json).toMatchObject({ subscription_id: stored.subscription_id, vehicle_id: v.id });
    }
    expect(new Set(received.map((r) => r.json.event_id)).size).toBe(total);
    const { rows: statuses } = await t.pool.query(
      `SELECT status, count(*)::int AS n FROM monitoring_deliveries d JOIN monitoring_events e ON e.id = d.event_id
       WHERE e.vehicle_id = $1 GROUP BY status`,
      [v.id],
    );
    expect(statuses).toEqual([{ status: 'succeeded', n: total }]);
  }, 180_000);
});

describe('geofence edges', () => {
  it('a pass through a fence between two sparse fixes is an entry and an exit; the first fix ever sends nothing', async () => {
    const v = await trackedVehicle();
    const subscription = await subscribe(v.id, {
      tier: 'premium',
      events: ['geo_fence_entry', 'geo_fence_exit'],
    });
    // Inside the fence at the first fix: where the vehicle is, not an entry.
    await push(v.providerVehicleId, [[3000, { location: { lat: 52.52, lon: 13.4, heading: 0 } }]]);
    expect(await storedKinds(subscription.id)).toEqual([]);
    await push(v.providerVehicleId, [[3010, { location: { lat: 52.515, lon: 13.4, heading: 0 } }]]);
    expect(await storedKinds(subscription.id)).toEqual(['geo_fence_exit']);
    // 556 m south to 556 m north of the centre: both fixes outside, the road between goes through it.
    await push(v.providerVehicleId, [[3100, { location: { lat: 52.525, lon: 13.4, heading: 0 } }]]);
    const { rows } = await t.pool.query(
      `SELECT kind, episode_key AS key, occurred_at AS "occurredAt" FROM monitoring_events
       WHERE subscription_id = $1 ORDER BY detected_at, kind`,
      [subscription.id],
    );
    expect(rows).toEqual([
      { kind: 'geo_fence_exit', key: depot, occurredAt: at(3010) },
      { kind: 'geo_fence_entry', key: depot, occurredAt: at(3100) },
      { kind: 'geo_fence_exit', key: depot, occurredAt: at(3100) },
    ]);
  }, 60_000);

  it("a fence created or deleted after the worker cached the company's fences is watched, or dropped, from the next evaluation", async () => {
    const v = await trackedVehicle();
    const subscription = await subscribe(v.id, { tier: 'premium', events: ['geo_fence_entry', 'geo_fence_exit'] });
    await push(v.providerVehicleId, [[3300, { location: { lat: 52.58, lon: 13.4, heading: 0 } }]]);
    const yard = await v1(t, 'POST', '/geofences', acme.key, {
      name: 'Yard',
      area: { type: 'Circle', center: { lat: 52.6, lon: 13.4 }, radius_m: 300 },
    });
    expect(yard.statusCode).toBe(201);
    await push(v.providerVehicleId, [[3320, { location: { lat: 52.6, lon: 13.4, heading: 0 } }]]);
    expect(await storedKinds(subscription.id)).toEqual(['geo_fence_entry']);
    expect((await v1(t, 'DELETE', `/geofences/${yard.json().data.id}`, acme.key)).statusCode).toBe(200);
    // Deleted while the vehicle is inside: dropped without an exit.
    await push(v.providerVehicleId, [[3340, { location: { lat: 52.62, lon: 13.4, heading: 0 } }]]);
    expect(await storedKinds(subscription.id)).toEqual(['geo_fence_entry']);
  }, 60_000);
});

describe('tiers', () => {
  it('refuses kinds a tier does not cover, naming the tier that does', async () => {
    const v = await trackedVehicle();
    const basic = await v1(t, 'POST', '/runs/subscribe', acme.key, {
      vehicle_id: v.id,
      webhook_url: `${receiver.url}/hooks/tier`,
      tier: 'basic',
      events: ['oil_change_needed', 'check_engine_light', 'hard_impact'],
    });
    expect(basic.statusCode).toBe(400);
    expect(basic.json().error.details.errors.map((e: { field: string }) => e.field)).toEqual(['events.1', 'events.2']);
  });
});
