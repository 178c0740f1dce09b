/**
 * Ownership boundaries (docs/ownership.md), end to end on real Postgres and Redis: a
 * vehicle drives, speeds, brakes hard and reports a weak battery and an engine code for its first
 * owner; it is transferred through the operator API; then the new owner's `signals`, instant
 * verification, console pages, dry run, live monitoring and deliveries show nothing of the first
 * owner's readings (the odometer aside), while the history report still covers both owners,
 * anonymized.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildHistoryReport } from '../../src/history/build-report.js';
import { monitoringKinds } from '../../src/domain/monitoring-kinds.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { newConsoleUser } from '../helpers/console.js';
import { createConnection, pushGeneric, settle } from '../helpers/ingest.js';
import { v1 } from '../helpers/monitoring.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

const vin = '1HGCM82633A004352';
const kmPerMile = 1.609344;
const dayMs = 24 * 3600 * 1000;
const started = Date.now();
const ago = (days: number, seconds = 0) => new Date(started - days * dayMs + seconds * 1000);
const transferAt = ago(1);

let t: TestApp;
let receiver: Receiver;
let seller: { id: string; key: string };
let buyer: { id: string; key: string };
let sellerConnection: { id: string; secret: string };
let buyerConnection: { id: string; secret: string };
let car: Record<string, any>;
let buyerSubscription: { id: string };

type Reading = { ts: Date; signals: Record<string, unknown> };

async function push(connection: { id: string; secret: string }, vehicle: string, readings: Reading[]) {
  const response = await pushGeneric(t, 'generic', connection.id, connection.secret, {
    readings: readings.map((r) => ({ vehicle, ts: r.ts.toISOString(), signals: r.signals })),
  });
  expect(response.statusCode, response.body).toBe(202);
  await settle(t);
}

/** Two days ago, for the first owner: a trip with speeding and a hard brake, an engine code, then a weak battery parked. */
function sellerDrive(at: (seconds: number) => Date): Reading[] {
  const fix = (lat: number) => ({ lat, lon: 13.45, heading: 0 });
  return [
    {
      ts: at(0),
      signals: {
        odometer_km: 20_000 * kmPerMile,
        engine_state: 'on',
        speed_kph: 0,
        location: fix(52.5),
        battery_voltage: 13.8,
        fuel_percent: 40,
        dtcs: [{ code: 'P0300', mil: true }],
        check_engine_light: true,
      },
    },
    { ts: at(10), signals: { speed_kph: 150, location: fix(52.51) } },
    { ts: at(30), signals: { speed_kph: 150, location: fix(52.52) } },
    { ts: at(50), signals: { speed_kph: 150, location: fix(52.53) } },
    { ts: at(60), signals: { speed_kph: 20, events: [{ type: 'hard_brake', g: 0.6 }] } },
    { ts: at(120), signals: { engine_state: 'off', speed_kph: 0, battery_voltage: 11.5 } },
    { ts: at(300), signals: { battery_voltage: 11.5 } },
    { ts: at(400), signals: { odometer_km: 20_012 * kmPerMile, battery_voltage: 11.5 } },
  ];
}

const dryRun = async (key: string, subscriptionId: string) => {
  const response = await v1(t, 'POST', `/subscriptions/${subscriptionId}/dry-run`, key, {
    since: ago(3).toISOString(),
  });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data.events as Array<{ event: string; occurred_at: string }>;
};

const subscribeAll = async (key: string, vehicleId: string) => {
  const response = await v1(t, 'POST', '/runs/subscribe', key, {
    vehicle_id: vehicleId,
    webhook_url: `${receiver.url}/hooks/${key.slice(-6)}`,
    tier: 'premium',
    events: monitoringKinds,
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data as { id: string };
};

beforeAll(async () => {
  t = await createTestApp({ WEBHOOK_ALLOW_NETS: '127.0.0.1/32' });
  receiver = await startReceiver();
  seller = await t.createCompany('Seller Logistics');
  buyer = await t.createCompany('Buyer Transport');
  const sellerCreated = await createConnection(t, seller.id, 'generic');
  sellerConnection = { id: sellerCreated.id, secret: sellerCreated.generated_secret! };
  const buyerCreated = await createConnection(t, buyer.id, 'generic');
  buyerConnection = { id: buyerCreated.id, secret: buyerCreated.generated_secret! };
  car = await t.createVehicle(seller.id, {
    name: 'Van 7',
    vin,
    provider_connection_id: sellerConnection.id,
    provider_vehicle_id: 'car-1',
  });
  // The first owner has held the van for ten days.
  await t.pool.query(`UPDATE vehicles SET created_at = $2 WHERE id = $1`, [car.id, ago(10)]);
  await t.pool.query(`UPDATE vehicle_ownerships SET started_at = $2 WHERE vehicle_id = $1`, [car.id, ago(10)]);
  await t.startWorkers(['ingest', 'health', 'webhooks']);
  await push(
    sellerConnection,
    'car-1',
    sellerDrive((seconds) => ago(2, seconds)),
  );
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

describe('before the transfer', () => {
  it('the first owner sees its readings, alerts and (in a dry run) its speeding', async () => {
    const vehicle = (await t.api('GET', `/vehicles/${car.id}`, seller.key)).json().data;
    expect(vehicle.signals).toMatchObject({ battery_voltage: 11.5, location: { lat: 52.53 }, fuel_percent: 40 });
    expect(vehicle.health.alerts.map((a: { type: string }) => a.type).sort()).toEqual([
      'battery_voltage_low',
      'check_engine_light',
    ]);
    const subscription = await subscribeAll(seller.key, car.id);
    const kinds = (await dryRun(seller.key, subscription.id)).map((e) => e.event);
    expect(kinds).toEqual(
      expect.arrayContaining([
        'speed_limit_exceeded',
        'rapid_deceleration',
        'check_engine_light',
        'battery_voltage_low',
      ]),
    );
  });
});

describe('after the transfer', () => {
  beforeAll(async () => {
    // Half a day ago, after the transfer's `at` (a day ago): a reading of the new owner's span, although
    // the first owner's tracker still fed the van then.
    await push(sellerConnection, 'car-1', [{ ts: ago(0.5), signals: { fuel_percent: 33 } }]);
    const response = await t.admin('POST', `/vehicles/${car.id}/transfer`, {
      to_company_id: buyer.id,
      at: transferAt.toISOString(),
    });
    expect(response.statusCode, response.body).toBe(200);
  });

  it("the new owner's signals keep the odometer and its own span's readings, nothing else; health starts over", async () => {
    const response = await t.api('GET', `/vehicles/${car.id}`, buyer.key);
    expect(response.statusCode).toBe(200);
    const vehicle = response.json().data;
    expect(Object.keys(vehicle.signals).sort()).toEqual(['fuel_percent', 'observed_at', 'odometer']);
    expect(vehicle.signals.odometer).toMatchObject({ miles: 20_012, source: 'generic' });
    expect(vehicle.signals.fuel_percent).toBe(33);
    expect(vehicle.signals.observed_at).toEqual({
      odometer_km: ago(2, 400).toISOString(),
      fuel_percent: ago(0.5).toISOString(),
    });
    expect(vehicle.as_of).toBe(ago(0.5).toISOString());
    expect(vehicle.health).toEqual({ status: 'ok', alerts: [] });
    expect(vehicle.link_broken).toBeNull();
    // The odometer series' latest values travel with the car too (they decide whether a value changed).
    const latest = await t.pool.query(`SELECT odometer_values FROM vehicles WHERE id = $1`, [car.id]);
    expect(latest.rows[0].odometer_values).toEqual({ odometer_km: 20_012 * kmPerMile });
    // The rules started over: only the odometer's watermark stayed, and the new span was read again.
    const state = await t.pool.query(`SELECT fed_through, state FROM vehicle_health_state WHERE vehicle_id = $1`, [
      car.id,
    ]);
    expect(Object.keys(state.rows[0].fed_through).sort()).toEqual(['fuel_percent', 'odometer_km']);
    expect(Date.parse(state.rows[0].fed_through.fuel_percent)).toBe(ago(0.5).getTime());
    expect(state.rows[0].state).toMatchObject({
      alerts: [],
      linkReason: null,
      link: { trusted: { source: 'generic' } },
    });
  });

  it("the new owner's instant verification shows the odometer and no location, condition or codes of the first owner", async () => {
    const response = await v1(t, 'POST', '/instant/verify', buyer.key, { vin, level: 'premium' });
    expect(response.statusCode, response.body).toBe(200);
    const verification = response.json().data;
    expect(verification.odometer.value).toBe(20_012);
    expect(verification.location).toBeNull();
    expect(verification.condition).toMatchObject({
      battery_voltage: null,
      fuel_level: 33,
      check_engine: null,
      check_engine_light: null,
    });
    expect(verification.diagnostics).toMatchObject({ dtcs: [], open_alerts: [] });
  });

  it("the new owner's console pages show nothing of the first owner's readings", async () => {
    const user = await newConsoleUser(t, buyer.id, 'ops@buyer.test', 'a long enough password');
    for (const url of ['/console/vehicles', `/console/vehicles/${car.id}`]) {
      const page = await user.get(url);
      expect(page.statusCode, url).toBe(200);
      expect(page.body).toContain('Van 7');
      // "Last seen" is the odometer's time: the odometer and its time travel with the car.
      for (const trace of ['P0300', '52.53', '11.5', 'Battery', 'Check engine', 'Needs attention'])
        expect(page.body, `${url} shows ${trace}`).not.toContain(trace);
    }
    const detail = await user.get(`/console/vehicles/${car.id}`);
    expect(detail.body).toContain('miles: 20012');
  });

  it("the new owner's dry run over the first owner's days finds nothing", async () => {
    buyerSubscription = await subscribeAll(buyer.key, car.id);
    expect(await dryRun(buyer.key, buyerSubscription.id)).toEqual([]);
  });

  it('live, the new owner gets events of its own readings only; a late reading of the first owner changes nothing', async () => {
    await t.admin('PATCH', `/vehicles/${car.id}`, {
      telematics_provider: 'generic',
      provider_connection_id: buyerConnection.id,
      provider_vehicle_id: 'b-1',
    });
    // The new owner's tracker backfills a reading from the first owner's days: stored, never shown or evaluated.
    await push(buyerConnection, 'b-1', [
      {
        ts: ago(2, 500),
        signals: {
          location: { lat: 52.6, lon: 13.5, heading: 0 },
          speed_kph: 160,
          fuel_percent: 9,
          battery_voltage: 11.0,
          events: [{ type: 'hard_brake', g: 0.7 }],
        },
      },
    ]);
    const stored = await t.pool.query(
      `SELECT count(*)::int AS n FROM readings WHERE vehicle_id = $1 AND recorded_at = $2`,
      [car.id, ago(2, 500)],
    );
    expect(stored.rows[0].n).toBe(4);
    const backfilled = (await t.api('GET', `/vehicles/${car.id}`, buyer.key)).json().data;
    expect(Object.keys(backfilled.signals).sort()).toEqual(['fuel_percent', 'observed_at', 'odometer']);
    expect(backfilled.signals.fuel_percent).toBe(33);

    // Its own drive: the battery is fine and no code is active; it speeds once.
    const own = (seconds: number) => new Date(Date.now() + 2_000 + seconds * 1000);
    const fix = (lat: number) => ({ lat, lon: 13.3, heading: 90 });
    await push(buyerConnection, 'b-1', [
      {
        ts: own(0),
        signals: { engine_state: 'on', speed_kph: 50, location: fix(52.4), battery_voltage: 13.9, dtcs: [] },
      },
      { ts: own(10), signals: { speed_kph: 130, location: fix(52.41) } },
      { ts: own(30), signals: { speed_kph: 130, location: fix(52.42) } },
      { ts: own(45), signals: { speed_kph: 130, location: fix(52.43), battery_voltage: 13.9, dtcs: [] } },
    ]);

    const { rows } = await t.pool.query(
      `SELECT kind, occurred_at FROM monitoring_events WHERE subscription_id = $1 ORDER BY occurred_at`,
      [buyerSubscription.id],
    );
    expect(rows.map((r) => r.kind)).toEqual(['speed_limit_exceeded']);
    expect(rows[0].occurred_at.getTime()).toBeGreaterThan(transferAt.getTime());
    const vehicle = (await t.api('GET', `/vehicles/${car.id}`, buyer.key)).json().data;
    expect(vehicle.signals).toMatchObject({ location: { lat: 52.43 }, battery_voltage: 13.9, dtcs: [] });
    expect(vehicle.signals.fuel_percent).toBe(33);
    expect(vehicle.health.alerts).toEqual([]);

    // Its deliveries are its own events, delivered.
    await expect
      .poll(
        async () =>
          (await v1(t, 'GET', `/subscriptions/${buyerSubscription.id}/deliveries`, buyer.key))
            .json()
            .data.map((d: { event: string; status: string }) => [d.event, d.status]),
        { timeout: 10_000 },
      )
      .toEqual([['speed_limit_exceeded', 'succeeded']]);
    const sent = receiver.received.filter((r) => r.path === `/hooks/${buyer.key.slice(-6)}`);
    expect(sent.map((r) => r.json.event)).toEqual(['speed_limit_exceeded']);
    // Its premium predictions read its own battery, not the first owner's weak one.
    expect(sent[0]!.json.predictions).toEqual({
      next_oil_change: null,
      brake_replacement: null,
      battery_health: expect.stringMatching(/^Charging normally: 13\.9 V on \d{4}-\d{2}-\d{2}\.$/),
    });
  });

  it('the history report still covers both owners, anonymized', async () => {
    const report = (await buildHistoryReport(t.pool, { vin, tier: 'lifetime', reportId: 'r1', now: new Date() }))!;
    expect(report.ownership!.map((o) => [o.owner, o.start_date, o.end_date])).toEqual([
      ['Owner 1', ago(10).toISOString().slice(0, 10), transferAt.toISOString().slice(0, 10)],
      ['Owner 2', transferAt.toISOString().slice(0, 10), 'present'],
    ]);
    // The first owner's hard brakes (the late one included) and odometer readings are in it.
    expect(report.lifetime_metrics.harsh_braking_events).toBe(2);
    expect(report.telematics!.odometer_timeline.map((p) => p.miles)).toContain(20_012);
    const json = JSON.stringify(report);
    for (const secret of [seller.id, buyer.id, 'Seller', 'Buyer', car.id]) expect(json).not.toContain(secret);
  });
});

describe('a transfer dated in the past', () => {
  it("asks the runs stage for the new span's health events after its commit, and the new owner gets the run", async () => {
    const van = await t.createVehicle(seller.id, {
      name: 'Van 8',
      provider_connection_id: sellerConnection.id,
      provider_vehicle_id: 'car-2',
    });
    await t.pool.query(`UPDATE vehicle_ownerships SET started_at = $2 WHERE vehicle_id = $1`, [van.id, ago(10)]);
    // Half a day ago, in what becomes the new owner's span: an overheating engine (critical).
    await push(sellerConnection, 'car-2', [{ ts: ago(0.5), signals: { engine_state: 'on', coolant_temp_c: 120 } }]);
    // No runs worker runs: what asks for the runs stage waits in its queue. The asks so far are dropped.
    const runsQueue = t.queues.queue('runs');
    const asks = async () => (await runsQueue.getJobs(['waiting'])).filter((job) => job.name === 'runs.from-health');
    for (const job of await asks()) await job.remove();

    const response = await t.admin('POST', `/vehicles/${van.id}/transfer`, {
      to_company_id: buyer.id,
      at: transferAt.toISOString(),
    });
    expect(response.statusCode, response.body).toBe(200);
    // The restart evaluated the new span: a critical coolant alert, reported as the new owner's health events.
    const events = await t.pool.query(
      `SELECT company_id, kind FROM health_events WHERE vehicle_id = $1 AND consumed_at IS NULL AND company_id = $2`,
      [van.id, buyer.id],
    );
    expect(events.rows.map((r) => r.kind)).toEqual(expect.arrayContaining(['alert_opened', 'status_changed']));
    expect(await asks()).toHaveLength(1);

    const runs = await t.startWorkers(['runs']);
    await expect
      .poll(
        async () =>
          (await t.pool.query(`SELECT company_id FROM runs WHERE vehicle_id = $1`, [van.id])).rows.map(
            (r) => r.company_id,
          ),
        { timeout: 10_000 },
      )
      .toEqual([buyer.id]);
    await runs.close();
  });
});
