/**
 * The history report end to end on real Postgres: readings pushed through the real ingest path
 * (generic push → inbox → ingest worker → rollups), a transfer through the operator API, a second
 * vehicle row of the same VIN in a third company, then buildHistoryReport.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertMonitoringSubscription } from '../../src/db/monitoring-subscriptions.js';
import { withTransaction } from '../../src/db/pool.js';
import { buildHistoryReport } from '../../src/history/build-report.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createConnection, drainInbox, pushGeneric } from '../helpers/ingest.js';

const vin = '1HGCM82633A004352';
const dayMs = 24 * 3600 * 1000;
const kmPerMile = 1.609344;
const now = new Date();
const ago = (days: number, minutes = 0) => new Date(now.getTime() - days * dayMs + minutes * 60_000).toISOString();

let t: TestApp;
let acme: { id: string; key: string };
let beta: { id: string; key: string };
let gamma: { id: string; key: string };
let acmeConnection: { id: string; secret: string };
let car: Record<string, any>;

/** One trip a day from 50 to 11 days ago: engine on, 40 miles at speed, engine off. */
function tripDays() {
  const readings: Array<{ vehicle: string; ts: string; signals: Record<string, unknown> }> = [];
  for (let d = 50; d >= 11; d--) {
    const startMiles = 20_000 + (50 - d) * 40;
    readings.push({
      vehicle: 'car-1',
      ts: ago(d),
      signals: { engine_state: 'on', odometer_km: startMiles * kmPerMile },
    });
    for (let m = 1; m <= 10; m++) {
      // 6 of 10 samples at 100 km/h (highway), 4 at 40 km/h.
      readings.push({ vehicle: 'car-1', ts: ago(d, m), signals: { speed_kph: m <= 6 ? 100 : 40 } });
    }
    readings.push({
      vehicle: 'car-1',
      ts: ago(d, 60),
      signals: { engine_state: 'off', odometer_km: (startMiles + 40) * kmPerMile },
    });
  }
  return readings;
}

async function push(readings: unknown[]) {
  const response = await pushGeneric(t, 'generic', acmeConnection.id, acmeConnection.secret, { readings });
  expect(response.statusCode).toBe(202);
  await drainInbox(t);
}

async function rollupTotals(vehicleId: string) {
  const { rows } = await t.pool.query(
    `SELECT (SELECT sum(readings)::int FROM odometer_daily WHERE vehicle_id = $1) AS odometer_readings,
            (SELECT sum(speed_samples)::int FROM driving_daily WHERE vehicle_id = $1) AS speed_samples,
            (SELECT sum(trips)::int FROM driving_daily WHERE vehicle_id = $1) AS trips,
            (SELECT sum(hard_brakes)::int FROM driving_daily WHERE vehicle_id = $1) AS hard_brakes`,
    [vehicleId],
  );
  return rows[0];
}

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.createCompany('Acme Rentals');
  beta = await t.createCompany('Beta Leasing');
  gamma = await t.createCompany('Gamma Motors');
  const created = await createConnection(t, acme.id, 'generic');
  acmeConnection = { id: created.id, secret: created.generated_secret! };
  car = await t.createVehicle(acme.id, {
    name: 'Car 1',
    vin,
    make: 'Honda',
    model: 'Accord',
    year: 2003,
    provider_connection_id: acmeConnection.id,
    provider_vehicle_id: 'car-1',
  });
  // The vehicle was registered 60 days ago (its first ownership span starts then).
  await t.pool.query(`UPDATE vehicles SET created_at = $2 WHERE id = $1`, [car.id, ago(60)]);
  await t.pool.query(`UPDATE vehicle_ownerships SET started_at = $2 WHERE vehicle_id = $1`, [car.id, ago(60)]);
  await t.startWorkers(['ingest']);
});
afterAll(() => t.close());

describe('history rollups at ingest', () => {
  it('counts what a batch stored, and a repeated payload adds nothing', async () => {
    const readings = tripDays();
    await push(readings);
    const once = await rollupTotals(car.id);
    expect(once).toEqual({ odometer_readings: 80, speed_samples: 400, trips: 40, hard_brakes: 0 });
    await push(readings);
    expect(await rollupTotals(car.id)).toEqual(once);
  });

  it('counts harsh events once and keeps a day checkpoint correct whatever the arrival order', async () => {
    const events = [
      { vehicle: 'car-1', ts: ago(40, 5), signals: { events: [{ type: 'hard_brake', g: 0.45 }] } },
      { vehicle: 'car-1', ts: ago(40, 7), signals: { events: [{ type: 'hard_accel', g: 0.4 }] } },
    ];
    await push(events);
    await push(events);
    // A reading of day −30 arriving late, lower than the day's first and last: a drop inside the day.
    await push([{ vehicle: 'car-1', ts: ago(30, 30), signals: { odometer_km: 15_000 * kmPerMile } }]);
    const totals = await rollupTotals(car.id);
    expect(totals.hard_brakes).toBe(1);
    const { rows } = await t.pool.query(
      `SELECT first_km, last_km, min_km, readings FROM odometer_daily
       WHERE vehicle_id = $1 AND day = ($2::timestamptz AT TIME ZONE 'UTC')::date AND first_at <= $2`,
      [car.id, ago(30, 30)],
    );
    expect(rows.some((r) => Math.round(r.min_km / kmPerMile) === 15_000)).toBe(true);
  });

  it('stores an impact with its airbag and the location the vehicle sent', async () => {
    await push([
      { vehicle: 'car-1', ts: ago(35, 20), signals: { location: { lat: 41.8781, lon: -87.6298, heading: 0 } } },
      {
        vehicle: 'car-1',
        ts: ago(35, 21),
        signals: { events: [{ type: 'impact', g: 1.9 }, { type: 'airbag_deployment' }] },
      },
    ]);
    const { rows } = await t.pool.query(`SELECT kind FROM vehicle_events WHERE vehicle_id = $1 ORDER BY kind`, [
      car.id,
    ]);
    expect(rows.map((r) => r.kind)).toEqual(['airbag_deployment', 'hard_accel', 'hard_brake', 'impact']);
  });
});

describe('migration 0015 backfill', () => {
  it('builds the same rollups from stored readings as ingest kept', async () => {
    const snapshot = async () => {
      const odometer = await t.pool.query(`SELECT * FROM odometer_daily ORDER BY vehicle_id, day, signal, source`);
      const driving = await t.pool.query(`SELECT * FROM driving_daily ORDER BY vehicle_id, day`);
      return { odometer: odometer.rows, driving: driving.rows };
    };
    const kept = await snapshot();
    expect(kept.odometer.length).toBeGreaterThan(0);
    const migration = readFileSync(new URL('../../migrations/0015_history.sql', import.meta.url), 'utf8');
    const backfill = migration.slice(migration.indexOf('-- Rollups of what is already stored'));
    await withTransaction(t.pool, async (tx) => {
      await tx.query(`TRUNCATE odometer_daily, driving_daily`);
      await tx.query(backfill);
    });
    expect(await snapshot()).toEqual(kept);
  });
});

describe('POST /admin/v1/vehicles/:id/transfer', () => {
  it('refuses an unknown company (404), the same company and a time in the future or before the current owner', async () => {
    const unknown = await t.admin('POST', `/vehicles/${car.id}/transfer`, {
      to_company_id: '00000000-0000-4000-8000-000000000000',
    });
    expect(unknown.statusCode).toBe(404);
    expect((await t.admin('POST', `/vehicles/${car.id}/transfer`, { to_company_id: 'nope' })).statusCode).toBe(404);
    const same = await t.admin('POST', `/vehicles/${car.id}/transfer`, { to_company_id: acme.id });
    expect(same.statusCode).toBe(409);
    const future = await t.admin('POST', `/vehicles/${car.id}/transfer`, {
      to_company_id: beta.id,
      at: new Date(now.getTime() + dayMs).toISOString(),
    });
    expect(future.statusCode).toBe(400);
    expect(future.json().error.details.errors[0].field).toBe('at');
    const early = await t.admin('POST', `/vehicles/${car.id}/transfer`, { to_company_id: beta.id, at: ago(90) });
    expect(early.statusCode).toBe(400);
    expect((await t.admin('POST', `/vehicles/x/transfer`, { to_company_id: beta.id })).statusCode).toBe(404);
  });

  it('refuses while the old company has an open run on the vehicle (409)', async () => {
    const request = await t.admin('POST', `/companies/${acme.id}/service-requests`, {
      vehicle_id: car.id,
      title: 'Brakes squeal',
      items: [{ title: 'Brake inspection', type: 'inspection' }],
    });
    expect(request.statusCode).toBe(201);
    const blocked = await t.admin('POST', `/vehicles/${car.id}/transfer`, { to_company_id: beta.id, at: ago(10) });
    expect(blocked.statusCode).toBe(409);
    expect(blocked.json().error.message).toBe('the vehicle has an open run: complete or dismiss it first');
    expect((await t.admin('POST', `/runs/${request.json().data.run.id}/dismiss`)).statusCode).toBe(200);
  });

  it('moves the vehicle: the new company sees it, the old one gets 404, the provider link is let go', async () => {
    const subscription = await insertMonitoringSubscription(t.pool, {
      companyId: acme.id,
      vehicleId: car.id,
      webhookUrl: 'https://receiver.example/hook',
      events: ['oil_change_needed'],
      tier: 'basic',
      options: {
        speed_limit_kph: 120,
        idle_minutes: 10,
        mileage_threshold_miles: null,
        fuel_level_percent: 15,
        geofence_ids: null,
      },
      secretCiphertext: Buffer.from('x'),
    });
    const response = await t.admin('POST', `/vehicles/${car.id}/transfer`, { to_company_id: beta.id, at: ago(10) });
    expect(response.statusCode).toBe(200);
    expect(response.json().data).toMatchObject({ id: car.id, company_id: beta.id, telematics_provider: null });
    expect((await t.api('GET', `/vehicles/${car.id}`, beta.key)).statusCode).toBe(200);
    expect((await t.api('GET', `/vehicles/${car.id}`, acme.key)).statusCode).toBe(404);
    const { rows } = await t.pool.query(
      `SELECT company_id, started_at, ended_at FROM vehicle_ownerships WHERE vehicle_id = $1 ORDER BY started_at`,
      [car.id],
    );
    expect(rows.map((r) => [r.company_id, r.ended_at?.toISOString() ?? null])).toEqual([
      [acme.id, ago(10)],
      [beta.id, null],
    ]);
    // Acme's monitoring of the vehicle ended; its tracker no longer feeds the vehicle.
    const ended = await t.pool.query(`SELECT deleted_at FROM monitoring_subscriptions WHERE id = $1`, [
      subscription.id,
    ]);
    expect(ended.rows[0].deleted_at).not.toBeNull();
    const before = await rollupTotals(car.id);
    await push([{ vehicle: 'car-1', ts: ago(1), signals: { speed_kph: 50 } }]);
    expect(await rollupTotals(car.id)).toEqual(before);
  });
});

describe('buildHistoryReport', () => {
  let gammaCar: Record<string, any>;

  beforeAll(async () => {
    // The same car, registered again by a third company, with a GPS tracker and a hand-typed odometer.
    const connection = await createConnection(t, gamma.id, 'generic');
    gammaCar = await t.createVehicle(gamma.id, {
      name: 'Re-registered',
      make: 'Honda',
      model: 'Accord',
      year: 2003,
      vin,
      provider_connection_id: connection.id,
      provider_vehicle_id: 'g-1',
    });
    const gps = { readings: [{ vehicle: 'g-1', ts: ago(0, -30), signals: { gps_odometer_km: 1_000 * kmPerMile } }] };
    expect((await pushGeneric(t, 'generic', connection.id, connection.generated_secret!, gps)).statusCode).toBe(202);
    await drainInbox(t);
    const manual = await t.api('PUT', `/vehicles/${gammaCar.id}`, gamma.key, { odometer_miles: 31_000 });
    expect(manual.statusCode).toBe(200);
  });

  it('answers null for a VIN no vehicle has', async () => {
    expect(
      await buildHistoryReport(t.pool, { vin: '1M8GDM9AXKP042788', tier: 'basic', reportId: 'r0', now }),
    ).toBeNull();
  });

  it('builds the lifetime report across owners and vehicle rows', async () => {
    const report = (await buildHistoryReport(t.pool, { vin, tier: 'lifetime', reportId: 'r1', now }))!;
    expect(report.vehicle).toEqual({ make: 'Honda', model: 'Accord', year: 2003, trim: null });

    expect(report.lifetime_metrics).toMatchObject({
      total_miles: 31_000,
      harsh_braking_events: 1,
      rapid_acceleration_events: 1,
      // 6 of 10 moving samples at 100 km/h, 4 at 40: 76 km/h = 47.2 mph.
      avg_speed: 47.2,
      highway_percentage: 60,
    });
    expect(report.lifetime_metrics.first_recorded).toBe(ago(50).slice(0, 10));

    expect(report.incidents).toEqual([
      {
        date: ago(35, 21).slice(0, 10),
        type: 'collision',
        severity: 'critical',
        location: 'Chicago Loop, Illinois, US',
        coordinates: { lat: 41.9, lon: -87.6 },
        airbag_deployment: true,
      },
    ]);

    expect(report.ownership!.map((o) => [o.owner, o.start_date, o.end_date])).toEqual([
      ['Owner 1', ago(60).slice(0, 10), ago(10).slice(0, 10)],
      ['Owner 2', ago(10).slice(0, 10), new Date().toISOString().slice(0, 10)],
      ['Owner 3', new Date().toISOString().slice(0, 10), 'present'],
    ]);
    // Owner 1 held it while it drove 40 days × 40 miles; one trip a day over 50 days.
    expect(report.ownership![0]).toMatchObject({ miles_driven: 1_600, avg_trips_per_day: 0.8 });

    const rules = report.odometer_integrity.flags.map((f) => f.rule).sort();
    expect(report.odometer_integrity.status).toBe('flagged');
    expect(rules).toContain('backwards');
    expect(rules).toContain('source_conflict');
    const backwards = report.odometer_integrity.flags.find((f) => f.rule === 'backwards')!;
    expect(backwards.readings.map((r) => r.miles)).toEqual([20_800, 15_000]);
    expect(backwards.explanation).toContain('5,800 miles lower');
    const conflict = report.odometer_integrity.flags.find((f) => f.rule === 'source_conflict')!;
    expect(conflict.readings.map((r) => [r.source, r.miles])).toEqual(
      expect.arrayContaining([
        ['manual', 31_000],
        ['generic', 1_000],
      ]),
    );

    expect(report.telematics!.odometer_timeline.filter((p) => p.flagged).length).toBeGreaterThanOrEqual(3);
    expect(report.telematics!.monthly_mileage.length).toBeGreaterThan(0);
    expect(report.predictive_insights).not.toBeNull();

    const json = JSON.stringify(report);
    for (const secret of [acme.id, beta.id, gamma.id, 'Acme', 'Beta', 'Gamma', car.id, gammaCar.id]) {
      expect(json).not.toContain(secret);
    }
  });

  it('keeps to the tier: basic has no incidents or ownership and only the last 6 months', async () => {
    const report = (await buildHistoryReport(t.pool, { vin, tier: 'basic', reportId: 'r2', now }))!;
    expect(report).toMatchObject({ incidents: null, ownership: null, telematics: null, predictive_insights: null });
    expect(report.service_history).toEqual([]);
    const later = new Date(now.getTime() + 200 * dayMs);
    const outOfRange = (await buildHistoryReport(t.pool, { vin, tier: 'basic', reportId: 'r3', now: later }))!;
    expect(outOfRange.lifetime_metrics).toMatchObject({ total_miles: null, harsh_braking_events: 0 });
    expect(outOfRange.odometer_integrity.status).toBe('insufficient_data');
  });
});
