/**
 * POST /v1/subscriptions/:id/dry-run: the events a subscription would have sent from the stored
 * readings and provider events of its vehicle, through the real detectors, storing and delivering
 * nothing; and its bounds (90 days back, MONITORING_DRY_RUN_MAX_READINGS).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { v1 } from '../helpers/monitoring.js';

const maxReadings = 300;
const now = new Date();
const minutesAgo = (minutes: number) => new Date(now.getTime() - minutes * 60_000);

let t: TestApp;
let acme: { id: string; key: string };

beforeAll(async () => {
  t = await createTestApp({
    WEBHOOK_ALLOW_NETS: '127.0.0.1/32',
    MONITORING_DRY_RUN_MAX_READINGS: String(maxReadings),
  });
  acme = await t.createCompany('Acme Fleet');
});
afterAll(() => t.close());

async function vehicleWithSubscription(key: string, companyId: string, body: Record<string, unknown>) {
  const vehicle = (await t.createVehicle(companyId)).id as string;
  const response = await v1(t, 'POST', '/runs/subscribe', key, {
    vehicle_id: vehicle,
    webhook_url: 'http://127.0.0.1:9/hook',
    ...body,
  });
  expect(response.statusCode, response.body).toBe(201);
  return { vehicle, subscription: response.json().data.id as string };
}

/** A second subscription on `vehicleId` to the geofence edges with these options. */
async function vehicleSubscriptionOn(vehicleId: string, options: Record<string, unknown>) {
  const response = await v1(t, 'POST', '/runs/subscribe', acme.key, {
    vehicle_id: vehicleId,
    webhook_url: 'http://127.0.0.1:9/hook',
    tier: 'premium',
    events: ['geo_fence_entry', 'geo_fence_exit'],
    options,
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data.id as string;
}

/** Stored readings of one numeric signal, as ingest writes them. */
async function insertReadings(vehicleId: string, signal: string, points: Array<[Date, number]>) {
  await t.pool.query(
    `INSERT INTO readings (vehicle_id, signal, recorded_at, value_num, source)
     SELECT $1, $2, at, value, 'generic' FROM unnest($3::timestamptz[], $4::float8[]) AS p(at, value)`,
    [vehicleId, signal, points.map(([at]) => at), points.map(([, value]) => value)],
  );
}

/** Every 10 seconds from `fromMinutesAgo` for `minutes`, at `value`. */
function series(fromMinutesAgo: number, minutes: number, value: number): Array<[Date, number]> {
  return Array.from({ length: minutes * 6 }, (_, i) => [
    new Date(minutesAgo(fromMinutesAgo).getTime() + i * 10_000),
    value,
  ]);
}

async function storedCounts(subscriptionId: string) {
  const { rows } = await t.pool.query(
    `SELECT (SELECT count(*)::int FROM monitoring_events WHERE subscription_id = $1) AS events,
            (SELECT count(*)::int FROM monitoring_deliveries WHERE subscription_id = $1) AS deliveries,
            (SELECT detector_state FROM monitoring_subscriptions WHERE id = $1) AS state`,
    [subscriptionId],
  );
  return rows[0];
}

describe('dry run', () => {
  it('answers the events two speeding episodes would have fired, once each, and stores nothing', async () => {
    const { vehicle, subscription } = await vehicleWithSubscription(acme.key, acme.id, {
      tier: 'premium',
      events: ['speed_limit_exceeded'],
      options: { speed_limit_kph: 100 },
    });
    // Two episodes well over the limit, each minutes long, separated by driving under it.
    await insertReadings(vehicle, 'speed_kph', [
      ...series(60, 5, 140),
      ...series(55, 5, 60),
      ...series(50, 5, 140),
      ...series(45, 2, 50),
    ]);
    await insertReadings(vehicle, 'odometer_km', [
      [minutesAgo(61), 40_000],
      [minutesAgo(44), 40_050],
    ]);
    // Another vehicle of the company speeding in the same window is not this subscription's.
    const bystander = (await t.createVehicle(acme.id)).id as string;
    await insertReadings(bystander, 'speed_kph', series(30, 5, 180));

    const before = await storedCounts(subscription);
    const response = await v1(t, 'POST', `/subscriptions/${subscription}/dry-run`, acme.key, {
      since: minutesAgo(120).toISOString(),
    });
    expect(response.statusCode, response.body).toBe(200);
    const data = response.json().data;
    expect(data.subscription_id).toBe(subscription);
    expect(data.since).toBe(minutesAgo(120).toISOString());
    expect(Date.parse(data.until)).toBeGreaterThanOrEqual(now.getTime());
    expect(data.events.map((e: { event: string }) => e.event)).toEqual([
      'speed_limit_exceeded',
      'speed_limit_exceeded',
    ]);
    const [first, second] = data.events;
    expect(Date.parse(first.occurred_at)).toBeGreaterThanOrEqual(minutesAgo(60).getTime());
    expect(Date.parse(first.occurred_at)).toBeLessThan(minutesAgo(55).getTime());
    expect(Date.parse(second.occurred_at)).toBeGreaterThanOrEqual(minutesAgo(50).getTime());
    expect(Date.parse(second.occurred_at)).toBeLessThan(minutesAgo(45).getTime());
    for (const event of data.events) {
      expect(Object.keys(event).sort()).toEqual(['actions', 'details', 'event', 'occurred_at', 'severity']);
      expect(event.details).toMatchObject({ type: expect.any(String), description: expect.any(String) });
      // The newest odometer reading at or before the event: 40,000 km.
      expect(event.details.current_mileage).toBeCloseTo(40_000 / 1.609344, 0);
      expect(event.actions).toMatchObject({ urgent: expect.any(Boolean), can_drive: expect.any(Boolean) });
    }

    // A window that starts after the first episode sees only the second.
    const later = await v1(t, 'POST', `/subscriptions/${subscription}/dry-run`, acme.key, {
      since: minutesAgo(53).toISOString(),
    });
    expect(later.json().data.events).toHaveLength(1);

    // Nothing was stored or queued, and the live detector state is untouched.
    expect(await storedCounts(subscription)).toEqual(before);
    expect(before).toEqual({ events: 0, deliveries: 0, state: {} });
  });

  it('replays health-rule kinds and geofence edges over stored locations; deleted fences are not replayed', async () => {
    const fence = async (name: string, lat: number, lon: number) => {
      const response = await v1(t, 'POST', '/geofences', acme.key, {
        name,
        area: { type: 'Circle', center: { lat, lon }, radius_m: 300 },
      });
      expect(response.statusCode).toBe(201);
      return response.json().data.id as string;
    };
    const depot = await fence('Depot', 41.52, -88.08);
    const removed = await fence('Removed', 41.52, -88.05);
    const { vehicle, subscription } = await vehicleWithSubscription(acme.key, acme.id, {
      tier: 'premium',
      events: ['coolant_temperature_high', 'geo_fence_entry', 'geo_fence_exit'],
    });
    expect((await v1(t, 'DELETE', `/geofences/${removed}`, acme.key)).statusCode).toBe(200);
    // West of the depot, through it, then east through where the removed fence was, a fix a minute.
    const path = [-88.12, -88.1, -88.08, -88.06, -88.05, -88.04].map((lon, i) => [minutesAgo(40 - i), lon] as const);
    await t.pool.query(
      `INSERT INTO readings (vehicle_id, signal, recorded_at, value_json, source)
       SELECT $1, 'location', at, jsonb_build_object('lat', 41.52, 'lon', lon, 'heading', 90), 'generic'
       FROM unnest($2::timestamptz[], $3::float8[]) AS p(at, lon)`,
      [vehicle, path.map(([at]) => at), path.map(([, lon]) => lon)],
    );
    // Coolant at 118 °C for three minutes, then normal.
    await insertReadings(vehicle, 'coolant_temp_c', [...series(30, 3, 118), ...series(27, 3, 90)]);

    const response = await v1(t, 'POST', `/subscriptions/${subscription}/dry-run`, acme.key, {
      since: minutesAgo(60).toISOString(),
    });
    expect(response.statusCode, response.body).toBe(200);
    const events = response.json().data.events as Array<{ event: string; occurred_at: string; details: any }>;
    expect(events.map((e) => [e.event, e.occurred_at])).toEqual([
      ['geo_fence_entry', minutesAgo(38).toISOString()],
      ['geo_fence_exit', minutesAgo(37).toISOString()],
      ['coolant_temperature_high', expect.any(String)],
    ]);
    expect(Date.parse(events[2]!.occurred_at)).toBeGreaterThanOrEqual(minutesAgo(30).getTime());
    expect(Date.parse(events[2]!.occurred_at)).toBeLessThan(minutesAgo(27).getTime());
    expect(events[2]!.details.type).toBe('maintenance');
    expect(events[0]!.details.description).toContain('Depot');

    // Watching only the depot by id gives the same edges; watching no fence gives none.
    const [entry, exit] = events;
    const only = await vehicleSubscriptionOn(vehicle, { geofence_ids: [depot] });
    const onlyEvents = (
      await v1(t, 'POST', `/subscriptions/${only}/dry-run`, acme.key, { since: minutesAgo(60).toISOString() })
    ).json().data.events;
    expect(onlyEvents.map((e: { event: string }) => e.event)).toEqual([entry!.event, exit!.event]);
    const none = await vehicleSubscriptionOn(vehicle, { geofence_ids: [] });
    expect(
      (await v1(t, 'POST', `/subscriptions/${none}/dry-run`, acme.key, { since: minutesAgo(60).toISOString() })).json()
        .data.events,
    ).toEqual([]);
    expect(await storedCounts(subscription)).toEqual({ events: 0, deliveries: 0, state: {} });
  });

  it('answers no events for a quiet history, and for kinds the history never shows', async () => {
    const { vehicle, subscription } = await vehicleWithSubscription(acme.key, acme.id, {
      tier: 'premium',
      events: ['speed_limit_exceeded'],
    });
    await insertReadings(vehicle, 'speed_kph', series(30, 5, 80));
    const response = await v1(t, 'POST', `/subscriptions/${subscription}/dry-run`, acme.key, {
      since: minutesAgo(60).toISOString(),
    });
    expect(response.statusCode).toBe(200);
    expect(response.json().data.events).toEqual([]);
  });

  it('refuses a since in the future, more than 90 days back, or malformed', async () => {
    const { subscription } = await vehicleWithSubscription(acme.key, acme.id, { events: ['oil_change_needed'] });
    const cases: Array<[unknown, string]> = [
      [{ since: new Date(now.getTime() + 3_600_000).toISOString() }, 'since'],
      [{ since: new Date(now.getTime() - 91 * 86_400_000).toISOString() }, 'since'],
      [{ since: 'yesterday' }, 'since'],
      [{ since: '2026-02-30T00:00:00Z' }, 'since'],
      [{}, 'since'],
      [{ since: minutesAgo(5).toISOString(), until: now.toISOString() }, 'until'],
    ];
    for (const [body, field] of cases) {
      const response = await v1(t, 'POST', `/subscriptions/${subscription}/dry-run`, acme.key, body);
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      expect(response.json().error.details.errors.map((e: { field: string }) => e.field)).toContain(field);
    }
    // 89 days back is inside the bound.
    const inside = await v1(t, 'POST', `/subscriptions/${subscription}/dry-run`, acme.key, {
      since: new Date(now.getTime() - 89 * 86_400_000).toISOString(),
    });
    expect(inside.statusCode).toBe(200);
  });

  it('refuses a window holding more than MONITORING_DRY_RUN_MAX_READINGS readings or provider events', async () => {
    const { vehicle, subscription } = await vehicleWithSubscription(acme.key, acme.id, {
      tier: 'premium',
      events: ['speed_limit_exceeded', 'hard_impact'],
    });
    // Exactly the maximum is accepted; one more is refused.
    await insertReadings(vehicle, 'speed_kph', series(100, maxReadings / 6, 50));
    const since = minutesAgo(101).toISOString();
    expect((await v1(t, 'POST', `/subscriptions/${subscription}/dry-run`, acme.key, { since })).statusCode).toBe(200);
    await insertReadings(vehicle, 'fuel_percent', [[minutesAgo(1), 40]]);
    const refused = await v1(t, 'POST', `/subscriptions/${subscription}/dry-run`, acme.key, { since });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error.details.errors).toEqual([
      { field: 'since', message: `the vehicle has more than ${maxReadings} readings since then; choose a later since` },
    ]);
    // A later since covers fewer readings.
    expect(
      (await v1(t, 'POST', `/subscriptions/${subscription}/dry-run`, acme.key, { since: minutesAgo(50).toISOString() }))
        .statusCode,
    ).toBe(200);

    const events = await vehicleWithSubscription(acme.key, acme.id, { tier: 'premium', events: ['hard_impact'] });
    await t.pool.query(
      `INSERT INTO vehicle_events (vehicle_id, kind, recorded_at, g, source)
       SELECT $1, 'harsh_braking', $2::timestamptz + i * interval '1 second', 0.4, 'generic' FROM generate_series(1, $3) AS i`,
      [events.vehicle, minutesAgo(30), maxReadings + 1],
    );
    const tooMany = await v1(t, 'POST', `/subscriptions/${events.subscription}/dry-run`, acme.key, {
      since: minutesAgo(31).toISOString(),
    });
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.json().error.details.errors[0].message).toContain('provider events');
  });

  it("answers 404 for another company's subscription and replays a deleted one of the caller's", async () => {
    const other = await t.createCompany('Other');
    const foreign = await vehicleWithSubscription(other.key, other.id, { events: ['oil_change_needed'] });
    const since = minutesAgo(60).toISOString();
    const response = await v1(t, 'POST', `/subscriptions/${foreign.subscription}/dry-run`, acme.key, { since });
    expect(response.statusCode).toBe(404);
    expect(response.json().error.code).toBe('NOT_FOUND');

    const own = await vehicleWithSubscription(acme.key, acme.id, { events: ['oil_change_needed'] });
    expect((await v1(t, 'DELETE', `/subscriptions/${own.subscription}`, acme.key)).statusCode).toBe(200);
    expect((await v1(t, 'POST', `/subscriptions/${own.subscription}/dry-run`, acme.key, { since })).statusCode).toBe(
      200,
    );
  });
});
