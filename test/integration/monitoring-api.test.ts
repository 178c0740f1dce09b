/**
 * The monitoring API under /v1 (docs/monitoring.md): subscribe (tiers, aliases, options, the
 * secret once and encrypted, the webhook URL rules), list/get/delete, geofences, the deliveries
 * read side and endpoint health, caps, tenant isolation of every route, and the shared
 * authentication and rate limit of the two public bases.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decryptSecret } from '../../src/security/secrets.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { midMinuteClock } from '../helpers/clock.js';
import { insertDelivery, v1 } from '../helpers/monitoring.js';

let t: TestApp;
let acme: { id: string; key: string };
let other: { id: string; key: string };
let acmeVehicle: string;
let otherVehicle: string;

const hook = 'http://127.0.0.1:9/hook';
const square = {
  type: 'Polygon',
  coordinates: [
    [
      [-88.1, 41.5],
      [-88.0, 41.5],
      [-88.0, 41.6],
      [-88.1, 41.6],
      [-88.1, 41.5],
    ],
  ],
};
const circle = { type: 'Circle', center: { lat: 41.52, lon: -88.08 }, radius_m: 500 };

beforeAll(async () => {
  t = await createTestApp({
    WEBHOOK_ALLOW_NETS: '127.0.0.1/32',
    MONITORING_SUBSCRIPTIONS_PER_COMPANY: '4',
    GEOFENCES_PER_COMPANY: '3',
  });
  acme = await t.createCompany('Acme Fleet');
  other = await t.createCompany('Other Fleet');
  acmeVehicle = (await t.createVehicle(acme.id)).id;
  otherVehicle = (await t.createVehicle(other.id)).id;
});
afterAll(() => t.close());

async function subscribe(key: string, body: Record<string, unknown>) {
  const response = await v1(t, 'POST', '/runs/subscribe', key, body);
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data;
}

async function createGeofence(key: string, body: Record<string, unknown> = { name: 'Yard', area: square }) {
  const response = await v1(t, 'POST', '/geofences', key, body);
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data as { id: string };
}

/** A company of its own, so the caps of the shared companies are not used up. */
async function freshCompany(name: string) {
  const company = await t.createCompany(name);
  const vehicle = (await t.createVehicle(company.id)).id as string;
  return { ...company, vehicle };
}

function fieldsOf(response: { json(): any }): string[] {
  return response.json().error.details.errors.map((e: { field: string }) => e.field);
}

describe('subscribe', () => {
  it('answers exactly the docs/monitoring.md shape: tier standard by default, options with defaults, the secret once', async () => {
    const company = await freshCompany('Shape');
    const created = await subscribe(company.key, {
      vehicle_id: company.vehicle,
      webhook_url: hook,
      events: ['oil_change_needed', 'check_engine_light'],
    });
    expect(Object.keys(created).sort()).toEqual(
      ['id', 'vehicle_id', 'webhook_url', 'events', 'tier', 'options', 'status', 'signing_secret', 'created_at'].sort(),
    );
    expect(created).toMatchObject({
      vehicle_id: company.vehicle,
      webhook_url: hook,
      events: ['oil_change_needed', 'check_engine_light'],
      tier: 'standard',
      status: 'active',
      options: {
        speed_limit_kph: 120,
        idle_minutes: 10,
        mileage_threshold_miles: null,
        fuel_level_percent: 15,
        geofence_ids: null,
      },
    });
    expect(created.signing_secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(new Date(created.created_at).toISOString()).toBe(created.created_at);
  });

  it('resolves the aliases to canonical kinds, deduplicated, in the order asked', async () => {
    const company = await freshCompany('Aliases');
    const created = await subscribe(company.key, {
      vehicle_id: company.vehicle,
      webhook_url: hook,
      tier: 'basic',
      events: ['low_battery', 'maintenance_needed', 'battery_voltage_low', 'maintenance_due', 'low_battery'],
    });
    expect(created.events).toEqual(['battery_voltage_low', 'maintenance_due']);
    const { rows } = await t.pool.query(`SELECT events FROM monitoring_subscriptions WHERE id = $1`, [created.id]);
    expect(rows[0].events).toEqual(['battery_voltage_low', 'maintenance_due']);
  });

  it('keeps the signing secret encrypted at rest and never answers it again', async () => {
    const company = await freshCompany('Secret');
    const created = await subscribe(company.key, {
      vehicle_id: company.vehicle,
      webhook_url: hook,
      events: ['tire_pressure_low'],
    });
    const { rows } = await t.pool.query(`SELECT secret_ciphertext FROM monitoring_subscriptions WHERE id = $1`, [
      created.id,
    ]);
    const ciphertext: Buffer = rows[0].secret_ciphertext;
    expect(ciphertext.includes(Buffer.from(created.signing_secret))).toBe(false);
    expect(ciphertext.includes(Buffer.from(created.signing_secret.slice(6)))).toBe(false);
    expect(decryptSecret(t.config.secretsKey, ciphertext)).toBe(created.signing_secret);

    const answers = [
      await v1(t, 'GET', `/subscriptions/${created.id}`, company.key),
      await v1(t, 'GET', '/subscriptions', company.key),
      await v1(t, 'DELETE', `/subscriptions/${created.id}`, company.key),
      await v1(t, 'GET', '/subscriptions?status=deleted', company.key),
    ];
    for (const answer of answers) {
      expect(answer.statusCode).toBe(200);
      expect(answer.body).not.toContain(created.signing_secret);
      expect(answer.body).not.toContain('signing_secret');
    }
  });

  it('checks tier coverage and names the tier that covers a refused kind', async () => {
    const base = { vehicle_id: acmeVehicle, webhook_url: hook };
    const cases: Array<[string | undefined, string[], number, RegExp]> = [
      [
        'basic',
        ['oil_change_needed', 'check_engine_light'],
        1,
        /check_engine_light is not covered by the basic tier; the standard tier covers it/,
      ],
      ['basic', ['hard_impact'], 0, /not covered by the basic tier; the premium tier covers it/],
      [undefined, ['geo_fence_entry'], 0, /not covered by the standard tier; the premium tier covers it/],
      ['standard', ['mileage_threshold'], 0, /premium tier covers it/],
      ['standard', ['fuel_level_low'], 0, /premium tier covers it/],
    ];
    for (const [tier, events, index, message] of cases) {
      const response = await v1(t, 'POST', '/runs/subscribe', acme.key, { ...base, events, ...(tier ? { tier } : {}) });
      expect(response.statusCode, `${tier} ${events}`).toBe(400);
      expect(response.json().error.code).toBe('INVALID_REQUEST');
      const errors = response.json().error.details.errors;
      expect(errors).toEqual([{ field: `events.${index}`, message: expect.stringMatching(message) }]);
    }
    // What each tier covers is accepted.
    const company = await freshCompany('Tiers');
    const basic = ['oil_change_needed', 'brake_wear_detected', 'tire_pressure_low', 'battery_voltage_low'];
    const basicAll = [...basic, 'coolant_temperature_high', 'maintenance_due'];
    expect(
      (
        await subscribe(company.key, {
          vehicle_id: company.vehicle,
          webhook_url: hook,
          tier: 'basic',
          events: basicAll,
        })
      ).events,
    ).toEqual(basicAll);
    const system = ['check_engine_light', 'abs_warning', 'airbag_warning', 'transmission_fault'];
    expect(
      (
        await subscribe(company.key, {
          vehicle_id: company.vehicle,
          webhook_url: hook,
          events: [...basicAll, ...system],
        })
      ).tier,
    ).toBe('standard');
    const premium = [
      ...basicAll,
      ...system,
      'hard_impact',
      'rapid_deceleration',
      'aggressive_acceleration',
      'airbag_deployment',
      'geo_fence_exit',
      'geo_fence_entry',
      'speed_limit_exceeded',
      'excessive_idling',
      'mileage_threshold',
      'fuel_level_low',
    ];
    expect(premium).toHaveLength(20);
    const all = await subscribe(company.key, {
      vehicle_id: company.vehicle,
      webhook_url: hook,
      tier: 'premium',
      events: premium,
    });
    expect(all.events).toEqual(premium);
  });

  it('refuses every invalid body with 400 INVALID_REQUEST naming the field', async () => {
    const valid = { vehicle_id: acmeVehicle, webhook_url: hook, events: ['oil_change_needed'] };
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ ...valid, events: ['engine_exploded'] }, 'events.0'],
      [{ ...valid, events: ['oil_change_needed', 'maintenance'] }, 'events.1'],
      [{ ...valid, events: [] }, 'events'],
      [{ ...valid, events: 'oil_change_needed' }, 'events'],
      [{ ...valid, events: Array(101).fill('oil_change_needed') }, 'events'],
      [{ ...valid, tier: 'gold' }, 'tier'],
      [{ ...valid, vehicle_id: 'not-a-uuid' }, 'vehicle_id'],
      [{ webhook_url: hook, events: ['oil_change_needed'] }, 'vehicle_id'],
      [{ ...valid, webhook_url: undefined }, 'webhook_url'],
      [{ ...valid, webhook_url: 'http://hooks.example.com/fleet' }, 'webhook_url'],
      [{ ...valid, webhook_url: 'ftp://hooks.example.com/fleet' }, 'webhook_url'],
      [{ ...valid, webhook_url: 'https://10.0.0.5/x' }, 'webhook_url'],
      [{ ...valid, webhook_url: 'https://169.254.169.254/latest/meta-data' }, 'webhook_url'],
      [{ ...valid, webhook_url: 'https://[::1]/x' }, 'webhook_url'],
      [{ ...valid, webhook_url: 'https://user:pass@hooks.example.com/x' }, 'webhook_url'],
      [{ ...valid, webhook_url: 'https://localhost/x' }, 'webhook_url'],
      [{ ...valid, webhook_url: 'https://db.internal/x' }, 'webhook_url'],
      [{ ...valid, webhook_url: 'not a url' }, 'webhook_url'],
      [{ ...valid, webhook_url: `https://hooks.example.com/${'x'.repeat(2048)}` }, 'webhook_url'],
      [{ ...valid, options: { speed_limit_kph: 0 } }, 'options.speed_limit_kph'],
      [{ ...valid, options: { speed_limit_kph: 301 } }, 'options.speed_limit_kph'],
      [{ ...valid, options: { speed_limit_kph: '120' } }, 'options.speed_limit_kph'],
      [{ ...valid, options: { idle_minutes: 0 } }, 'options.idle_minutes'],
      [{ ...valid, options: { idle_minutes: 1441 } }, 'options.idle_minutes'],
      [{ ...valid, options: { idle_minutes: 2.5 } }, 'options.idle_minutes'],
      [{ ...valid, options: { mileage_threshold_miles: 0 } }, 'options.mileage_threshold_miles'],
      [{ ...valid, options: { mileage_threshold_miles: 2_000_001 } }, 'options.mileage_threshold_miles'],
      [{ ...valid, options: { fuel_level_percent: 0 } }, 'options.fuel_level_percent'],
      [{ ...valid, options: { fuel_level_percent: 100 } }, 'options.fuel_level_percent'],
      [{ ...valid, options: { geofence_ids: ['nope'] } }, 'options.geofence_ids.0'],
      [
        { ...valid, options: { geofence_ids: Array.from({ length: 101 }, (_, i) => uuidOf(i)) } },
        'options.geofence_ids',
      ],
      [{ ...valid, options: { geofence_ids: [uuidOf(1), uuidOf(1)] } }, 'options.geofence_ids'],
      [{ ...valid, options: { geofence_ids: [uuidOf(7)] } }, 'options.geofence_ids.0'],
      [{ ...valid, options: { speed_limit: 100 } }, 'options.speed_limit'],
      [{ ...valid, options: [] }, 'options'],
      [{ ...valid, secret: 'mine' }, 'secret'],
    ];
    for (const [body, field] of bad) {
      const response = await v1(t, 'POST', '/runs/subscribe', acme.key, body);
      expect(response.statusCode, JSON.stringify(body).slice(0, 200)).toBe(400);
      expect(response.json()).toMatchObject({ success: false, error: { code: 'INVALID_REQUEST' } });
      expect(fieldsOf(response), JSON.stringify(body).slice(0, 200)).toContain(field);
    }
    // Several problems at once are all reported.
    const many = await v1(t, 'POST', '/runs/subscribe', acme.key, {
      ...valid,
      tier: 'basic',
      events: ['hard_impact', 'abs_warning'],
      webhook_url: 'http://hooks.example.com/x',
    });
    expect(fieldsOf(many).sort()).toEqual(['events.0', 'events.1', 'webhook_url']);
    expect(await countSubscriptions(acme.id)).toBe(0);
  });

  it('never echoes an address from the webhook URL check', async () => {
    const response = await v1(t, 'POST', '/runs/subscribe', acme.key, {
      vehicle_id: acmeVehicle,
      webhook_url: 'https://10.11.12.13/x',
      events: ['oil_change_needed'],
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.details.errors[0].message).toBe('points at a private address');
    expect(response.json().error.message).not.toContain('10.11.12.13');
  });

  it('allows plain http only to WEBHOOK_ALLOW_NETS', async () => {
    const company = await freshCompany('Plain http');
    const base = { vehicle_id: company.vehicle, events: ['oil_change_needed'] };
    expect(
      (await v1(t, 'POST', '/runs/subscribe', company.key, { ...base, webhook_url: 'http://127.0.0.1:8080/x' }))
        .statusCode,
    ).toBe(201);
    const outside = await v1(t, 'POST', '/runs/subscribe', company.key, {
      ...base,
      webhook_url: 'http://127.0.0.2:8080/x',
    });
    expect(outside.statusCode).toBe(400);
    expect(outside.json().error.details.errors).toEqual([{ field: 'webhook_url', message: expect.any(String) }]);
  });

  it("answers 404 for another company's vehicle, an unknown one and an inactive one", async () => {
    const company = await freshCompany('Vehicles');
    const inactive = (await t.createVehicle(company.id, { name: 'Sold' })).id;
    expect((await t.admin('DELETE', `/vehicles/${inactive}`)).statusCode).toBe(200);
    for (const vehicleId of [otherVehicle, inactive, uuidOf(99)]) {
      const response = await v1(t, 'POST', '/runs/subscribe', company.key, {
        vehicle_id: vehicleId,
        webhook_url: hook,
        events: ['oil_change_needed'],
      });
      expect(response.statusCode, vehicleId).toBe(404);
      expect(response.json().error.code).toBe('NOT_FOUND');
    }
    expect(await countSubscriptions(company.id)).toBe(0);
  });

  it("accepts the company's own live geofences in options; another company's or a deleted one is a 400", async () => {
    const company = await freshCompany('Fenced');
    const own = await createGeofence(company.key);
    const gone = await createGeofence(company.key, { name: 'Old yard', area: circle });
    expect((await v1(t, 'DELETE', `/geofences/${gone.id}`, company.key)).statusCode).toBe(200);
    const foreign = await createGeofence(other.key);
    const base = { vehicle_id: company.vehicle, webhook_url: hook, tier: 'premium', events: ['geo_fence_entry'] };

    const created = await subscribe(company.key, {
      ...base,
      options: {
        geofence_ids: [own.id.toUpperCase()],
        speed_limit_kph: 88.5,
        idle_minutes: 5,
        mileage_threshold_miles: 100_000,
        fuel_level_percent: 20,
      },
    });
    expect(created.options).toEqual({
      speed_limit_kph: 88.5,
      idle_minutes: 5,
      mileage_threshold_miles: 100_000,
      fuel_level_percent: 20,
      geofence_ids: [own.id],
    });
    const { rows } = await t.pool.query(`SELECT options FROM monitoring_subscriptions WHERE id = $1`, [created.id]);
    expect(rows[0].options).toEqual(created.options);
    // An empty list watches no fence; null (or no option) watches all of them.
    expect((await subscribe(company.key, { ...base, options: { geofence_ids: [] } })).options.geofence_ids).toEqual([]);

    for (const ids of [[foreign.id], [gone.id], [own.id, foreign.id]]) {
      const response = await v1(t, 'POST', '/runs/subscribe', company.key, { ...base, options: { geofence_ids: ids } });
      expect(response.statusCode).toBe(400);
      const index = ids.length - 1;
      expect(response.json().error.details.errors).toEqual([
        { field: `options.geofence_ids.${index}`, message: 'is not one of your geofences' },
      ]);
    }
  });

  it('holds MONITORING_SUBSCRIPTIONS_PER_COMPANY: 409 LIMIT_REACHED; deleting one makes room', async () => {
    const company = await freshCompany('Capped');
    const body = { vehicle_id: company.vehicle, webhook_url: hook, events: ['oil_change_needed'] };
    const responses = await Promise.all(
      Array.from({ length: 7 }, () => v1(t, 'POST', '/runs/subscribe', company.key, body)),
    );
    expect(responses.map((r) => r.statusCode).sort()).toEqual([201, 201, 201, 201, 409, 409, 409]);
    const refused = responses.find((r) => r.statusCode === 409)!;
    expect(refused.json().error).toMatchObject({
      code: 'LIMIT_REACHED',
      details: { resource: 'monitoring subscriptions', limit: 4 },
    });
    expect(await countSubscriptions(company.id)).toBe(4);
    // Other companies are not affected.
    const neighbour = await freshCompany('Neighbour');
    expect(
      (await v1(t, 'POST', '/runs/subscribe', neighbour.key, { ...body, vehicle_id: neighbour.vehicle })).statusCode,
    ).toBe(201);
    const first = responses.find((r) => r.statusCode === 201)!.json().data.id;
    expect((await v1(t, 'DELETE', `/subscriptions/${first}`, company.key)).statusCode).toBe(200);
    expect((await v1(t, 'POST', '/runs/subscribe', company.key, body)).statusCode).toBe(201);
    expect((await v1(t, 'POST', '/runs/subscribe', company.key, body)).statusCode).toBe(409);
  });

  it('works over real HTTP with the envelope, x-request-id and the rate-limit headers', async () => {
    const company = await freshCompany('Over HTTP');
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const response = await fetch(`${address}/v1/runs/subscribe`, {
      method: 'POST',
      headers: { authorization: `Bearer ${company.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ vehicle_id: company.vehicle, webhook_url: hook, events: ['low_battery'] }),
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(response.headers.get('x-ratelimit-limit')).toBe(String(t.config.rateLimitPerMinute));
    const body = await response.json();
    expect(body).toMatchObject({
      success: true,
      data: { events: ['battery_voltage_low'], signing_secret: expect.any(String) },
      meta: { version: '1.0.0' },
    });
    const unauthorized = await fetch(`${address}/v1/subscriptions`);
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get('www-authenticate')).toBe('Bearer');
    expect(((await unauthorized.json()) as { error: { code: string } }).error.code).toBe('UNAUTHORIZED');
  });
});

describe('list, get and delete', () => {
  it('lists newest first with paging, total and a vehicle filter; deleted ones only with status=deleted', async () => {
    const company = await freshCompany('Listing');
    const second = (await t.createVehicle(company.id, { name: 'Van 2' })).id;
    const ids: string[] = [];
    for (const vehicleId of [company.vehicle, second, company.vehicle]) {
      ids.push(
        (await subscribe(company.key, { vehicle_id: vehicleId, webhook_url: hook, events: ['oil_change_needed'] })).id,
      );
    }
    const all = (await v1(t, 'GET', '/subscriptions', company.key)).json();
    expect(all.data.map((s: { id: string }) => s.id)).toEqual([...ids].reverse());
    expect(all.meta).toMatchObject({ limit: 50, offset: 0, total: 3 });
    const page = (await v1(t, 'GET', '/subscriptions?limit=1&offset=1', company.key)).json();
    expect(page.data.map((s: { id: string }) => s.id)).toEqual([ids[1]]);
    expect(page.meta).toMatchObject({ limit: 1, offset: 1, total: 3 });
    const byVehicle = (await v1(t, 'GET', `/subscriptions?vehicle_id=${second}`, company.key)).json();
    expect(byVehicle.data.map((s: { id: string }) => s.id)).toEqual([ids[1]]);
    expect(byVehicle.meta.total).toBe(1);

    const deleted = await v1(t, 'DELETE', `/subscriptions/${ids[0]}`, company.key);
    expect(deleted.statusCode).toBe(200);
    expect(deleted.json().data).toMatchObject({ id: ids[0], status: 'deleted' });
    const { rows } = await t.pool.query(`SELECT deleted_at FROM monitoring_subscriptions WHERE id = $1`, [ids[0]]);
    expect(rows[0].deleted_at).toBeInstanceOf(Date);
    expect((await v1(t, 'DELETE', `/subscriptions/${ids[0]}`, company.key)).statusCode).toBe(404);
    expect((await v1(t, 'GET', '/subscriptions', company.key)).json().data.map((s: { id: string }) => s.id)).toEqual([
      ids[2],
      ids[1],
    ]);
    const gone = (await v1(t, 'GET', '/subscriptions?status=deleted', company.key)).json();
    expect(gone.data.map((s: { id: string; status: string }) => [s.id, s.status])).toEqual([[ids[0], 'deleted']]);
    const fetched = await v1(t, 'GET', `/subscriptions/${ids[0]}`, company.key);
    expect(fetched.statusCode).toBe(200);
    expect(fetched.json().data.status).toBe('deleted');
  });

  it('refuses bad list parameters', async () => {
    for (const query of ['vehicle_id=nope', 'status=paused', 'limit=0', 'limit=201', 'offset=-1', 'colour=red']) {
      const response = await v1(t, 'GET', `/subscriptions?${query}`, acme.key);
      expect(response.statusCode, query).toBe(400);
      expect(response.json().error.code).toBe('INVALID_REQUEST');
    }
  });

  it('gets one with endpoint_health, null before any attempt', async () => {
    const company = await freshCompany('Fresh health');
    const created = await subscribe(company.key, {
      vehicle_id: company.vehicle,
      webhook_url: hook,
      events: ['oil_change_needed'],
    });
    const { signing_secret: _secret, ...withoutSecret } = created;
    const fetched = (await v1(t, 'GET', `/subscriptions/${created.id}`, company.key)).json().data;
    expect(fetched).toEqual({
      ...withoutSecret,
      endpoint_health: {
        success_rate: null,
        attempts: 0,
        last_success_at: null,
        last_failure_at: null,
        last_failure: null,
      },
    });
  });
});

describe('deliveries and endpoint health', () => {
  it('lists deliveries newest first with their attempt timeline, filtered by status, event and since', async () => {
    const company = await freshCompany('Deliveries');
    const created = await subscribe(company.key, {
      vehicle_id: company.vehicle,
      webhook_url: hook,
      tier: 'premium',
      events: ['speed_limit_exceeded', 'battery_voltage_low'],
    });
    const subscription = { id: created.id, companyId: company.id, vehicleId: company.vehicle };
    const at = (minute: number) => new Date(Date.UTC(2026, 10, 20, 10, minute));
    const failed = await insertDelivery(t, subscription, {
      kind: 'speed_limit_exceeded',
      status: 'failed',
      createdAt: at(0),
      attempts: [
        { at: at(0), statusCode: 500, error: 'HTTP 500', durationMs: 40 },
        { at: at(1), statusCode: null, error: 'timeout after 10000 ms', durationMs: 10_000 },
        { at: at(6), statusCode: 503, error: 'HTTP 503', durationMs: 35 },
        { at: at(21), statusCode: 404, error: 'HTTP 404', durationMs: 30 },
      ],
    });
    const retrying = await insertDelivery(t, subscription, {
      kind: 'battery_voltage_low',
      status: 'retrying',
      createdAt: at(30),
      nextAttemptAt: at(31),
      attempts: [{ at: at(30), statusCode: 502, error: 'HTTP 502' }],
    });
    const succeeded = await insertDelivery(t, subscription, {
      kind: 'speed_limit_exceeded',
      status: 'succeeded',
      createdAt: at(40),
      attempts: [{ at: at(40), statusCode: 204, durationMs: 8 }],
    });
    const pending = await insertDelivery(t, subscription, {
      kind: 'battery_voltage_low',
      status: 'pending',
      createdAt: at(50),
      nextAttemptAt: at(50),
    });

    const list = (await v1(t, 'GET', `/subscriptions/${created.id}/deliveries`, company.key)).json();
    expect(list.meta).toMatchObject({ limit: 50, offset: 0, total: 4 });
    expect(list.data.map((d: { id: string }) => d.id)).toEqual([pending.id, succeeded.id, retrying.id, failed.id]);
    expect(list.data[3]).toEqual({
      id: failed.id,
      event_id: failed.eventId,
      event: 'speed_limit_exceeded',
      status: 'failed',
      attempts: [
        { at: at(0).toISOString(), status_code: 500, error: 'HTTP 500', duration_ms: 40, trigger: 'scheduled' },
        {
          at: at(1).toISOString(),
          status_code: null,
          error: 'timeout after 10000 ms',
          duration_ms: 10_000,
          trigger: 'scheduled',
        },
        { at: at(6).toISOString(), status_code: 503, error: 'HTTP 503', duration_ms: 35, trigger: 'scheduled' },
        { at: at(21).toISOString(), status_code: 404, error: 'HTTP 404', duration_ms: 30, trigger: 'scheduled' },
      ],
      attempt_count: 4,
      next_attempt_at: null,
      created_at: at(0).toISOString(),
    });
    expect(list.data[0]).toMatchObject({
      status: 'pending',
      attempts: [],
      attempt_count: 0,
      next_attempt_at: at(50).toISOString(),
    });
    expect(list.data[2]).toMatchObject({ status: 'retrying', next_attempt_at: at(31).toISOString() });

    const ids = async (query: string) => {
      const response = await v1(t, 'GET', `/subscriptions/${created.id}/deliveries?${query}`, company.key);
      expect(response.statusCode, query).toBe(200);
      return { ids: response.json().data.map((d: { id: string }) => d.id), total: response.json().meta.total };
    };
    expect(await ids('status=failed')).toEqual({ ids: [failed.id], total: 1 });
    expect(await ids('status=retrying')).toEqual({ ids: [retrying.id], total: 1 });
    expect(await ids('event=speed_limit_exceeded')).toEqual({ ids: [succeeded.id, failed.id], total: 2 });
    expect(await ids('event=low_battery')).toEqual({ ids: [pending.id, retrying.id], total: 2 });
    expect(await ids(`since=${at(30).toISOString()}`)).toEqual({
      ids: [pending.id, succeeded.id, retrying.id],
      total: 3,
    });
    expect(await ids(`since=${at(30).toISOString()}&event=battery_voltage_low&status=pending`)).toEqual({
      ids: [pending.id],
      total: 1,
    });
    expect(await ids('limit=2&offset=1')).toEqual({ ids: [succeeded.id, retrying.id], total: 4 });

    for (const query of [
      'status=sending',
      'status=',
      'event=engine_exploded',
      'since=yesterday',
      'since=2026-02-30T00:00:00Z',
      'limit=0',
      'page=2',
    ]) {
      const response = await v1(t, 'GET', `/subscriptions/${created.id}/deliveries?${query}`, company.key);
      expect(response.statusCode, query).toBe(400);
      expect(response.json().error.code).toBe('INVALID_REQUEST');
    }
  });

  it('computes endpoint health over the newest 100 attempts of the last 24 hours, with the last success and failure', async () => {
    const company = await freshCompany('Health');
    const created = await subscribe(company.key, {
      vehicle_id: company.vehicle,
      webhook_url: hook,
      tier: 'premium',
      events: ['excessive_idling'],
    });
    const subscription = { id: created.id, companyId: company.id, vehicleId: company.vehicle };
    // Six hours ago onwards: the whole story is inside the 24-hour window.
    const start = Date.now() - 6 * 3_600_000;
    const at = (minute: number) => new Date(start + minute * 60_000);
    // 30 old deliveries each failed once (outside the window of 100), then 80 that succeeded at once,
    // then 10 with a failure followed by a success (20 attempts), then a delivery whose only attempt failed.
    for (let i = 0; i < 30; i++) {
      await insertDelivery(t, subscription, {
        kind: 'excessive_idling',
        status: 'failed',
        createdAt: at(i),
        attempts: [{ at: at(i), statusCode: 500, error: 'HTTP 500' }],
      });
    }
    for (let i = 0; i < 80; i++) {
      await insertDelivery(t, subscription, {
        kind: 'excessive_idling',
        status: 'succeeded',
        createdAt: at(100 + i),
        attempts: [{ at: at(100 + i), statusCode: 200 }],
      });
    }
    for (let i = 0; i < 10; i++) {
      await insertDelivery(t, subscription, {
        kind: 'excessive_idling',
        status: 'succeeded',
        createdAt: at(200 + i * 2),
        attempts: [
          { at: at(200 + i * 2), statusCode: 429, error: 'HTTP 429' },
          { at: at(201 + i * 2), statusCode: 201 },
        ],
      });
    }
    await insertDelivery(t, subscription, {
      kind: 'excessive_idling',
      status: 'retrying',
      createdAt: at(300),
      nextAttemptAt: at(301),
      attempts: [{ at: at(300), statusCode: null, error: 'connection refused' }],
    });
    // A manual retry on an old delivery, the newest success of all.
    await t.pool.query(
      `INSERT INTO monitoring_attempts (delivery_id, attempt_number, trigger, started_at, duration_ms, status_code, subscription_id)
       SELECT id, 2, 'manual', $2, 9, 200, $1 FROM monitoring_deliveries WHERE subscription_id = $1 ORDER BY created_at LIMIT 1`,
      [created.id, at(310)],
    );

    const health = (await v1(t, 'GET', `/subscriptions/${created.id}`, company.key)).json().data.endpoint_health;
    // The newest 100 of 131 attempts: the manual success, the refused connection, the 20 of the last
    // ten deliveries (10 failures) and the newest 78 first-time successes: 89 successes of 100.
    expect(health).toEqual({
      success_rate: 0.89,
      attempts: 100,
      last_success_at: at(310).toISOString(),
      last_failure_at: at(300).toISOString(),
      last_failure: { status_code: null, error: 'connection refused' },
    });
  });
});

describe('geofences', () => {
  it('creates polygons and circles, lists newest first with total, gets and deletes', async () => {
    const company = await freshCompany('Geofences');
    const yard = await v1(t, 'POST', '/geofences', company.key, { name: 'North yard', area: square });
    expect(yard.statusCode).toBe(201);
    expect(Object.keys(yard.json().data).sort()).toEqual(['area', 'created_at', 'id', 'name']);
    expect(yard.json().data).toMatchObject({ name: 'North yard', area: square });
    const depot = await createGeofence(company.key, { name: 'Depot', area: circle });
    expect((await v1(t, 'GET', `/geofences/${depot.id}`, company.key)).json().data).toMatchObject({
      id: depot.id,
      name: 'Depot',
      area: circle,
    });
    const list = (await v1(t, 'GET', '/geofences', company.key)).json();
    expect(list.data.map((g: { id: string }) => g.id)).toEqual([depot.id, yard.json().data.id]);
    expect(list.meta).toMatchObject({ total: 2, limit: 50, offset: 0 });
    expect((await v1(t, 'GET', '/geofences?limit=1&offset=1', company.key)).json().data).toHaveLength(1);

    const deleted = await v1(t, 'DELETE', `/geofences/${depot.id}`, company.key);
    expect(deleted.statusCode).toBe(200);
    expect(deleted.json().data.id).toBe(depot.id);
    expect((await v1(t, 'GET', `/geofences/${depot.id}`, company.key)).statusCode).toBe(404);
    expect((await v1(t, 'DELETE', `/geofences/${depot.id}`, company.key)).statusCode).toBe(404);
    expect((await v1(t, 'GET', '/geofences', company.key)).json().meta.total).toBe(1);
    const { rows } = await t.pool.query(`SELECT deleted_at FROM geofences WHERE id = $1`, [depot.id]);
    expect(rows[0].deleted_at).toBeInstanceOf(Date);
  });

  it('refuses invalid geofences with 400 naming the field', async () => {
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ name: 'x' }, 'area'],
      [{ area: circle }, 'name'],
      [{ name: '', area: circle }, 'name'],
      [{ name: 'x'.repeat(201), area: circle }, 'name'],
      [{ name: 'x', area: circle, colour: 'red' }, 'colour'],
      [{ name: 'x', area: 'Polygon' }, 'area'],
      [{ name: 'x', area: { type: 'Square' } }, 'area'],
      [{ name: 'x', area: { ...circle, radius_m: 0 } }, 'area'],
      [{ name: 'x', area: { ...circle, radius_m: -5 } }, 'area'],
      [{ name: 'x', area: { ...circle, center: { lat: 91, lon: 0 } } }, 'area'],
      [
        {
          name: 'x',
          area: {
            type: 'Polygon',
            coordinates: [
              [
                [0, 0],
                [1, 0],
                [1, 1],
              ],
            ],
          },
        },
        'area',
      ],
      [
        {
          name: 'x',
          area: {
            type: 'Polygon',
            coordinates: [
              [
                [0, 0],
                [1, 0],
                [1, 1],
                [0, 1],
              ],
            ],
          },
        },
        'area',
      ],
      [
        {
          name: 'x',
          area: {
            type: 'Polygon',
            coordinates: [
              [
                [0, 0],
                [181, 0],
                [1, 1],
                [0, 0],
              ],
            ],
          },
        },
        'area',
      ],
      [
        {
          name: 'x',
          area: {
            type: 'Polygon',
            coordinates: [
              [
                [0, 0],
                [1, 95],
                [1, 1],
                [0, 0],
              ],
            ],
          },
        },
        'area',
      ],
      [
        {
          name: 'x',
          area: {
            type: 'Polygon',
            coordinates: [
              [
                [0, 0, 0, 0],
                [1, 0],
                [1, 1],
                [0, 0],
              ],
            ],
          },
        },
        'area',
      ],
      [{ name: 'x', area: { type: 'Polygon', coordinates: [] } }, 'area'],
      [{ name: 'x', area: { type: 'Polygon' } }, 'area'],
      [{ name: 'x', area: { ...square, bbox: [-88.1, 41.5, -88.0, 41.6] } }, 'area'],
      [
        {
          name: 'x',
          area: { type: 'Polygon', coordinates: [Array.from({ length: 2001 }, (_, i) => [i / 10_000, i % 2])] },
        },
        'area',
      ],
      [{ name: 'x', area: { ...circle, radius_m: 100_001 } }, 'area'],
      [{ name: 'x', area: { type: 'Circle', radius_m: 50 } }, 'area'],
      [{ name: 'x', area: { ...circle, center: { lat: 41, lon: -88, alt: 3 } } }, 'area'],
    ];
    const company = await freshCompany('Bad fences');
    for (const [body, field] of bad) {
      const response = await v1(t, 'POST', '/geofences', company.key, body);
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      expect(response.json().error.code).toBe('INVALID_REQUEST');
      expect(
        fieldsOf(response).some((f) => f === field || f.startsWith(`${field}.`) || f.startsWith(`${field}[`)),
        JSON.stringify(body),
      ).toBe(true);
    }
    expect((await v1(t, 'GET', '/geofences', company.key)).json().meta.total).toBe(0);
  });

  it('holds GEOFENCES_PER_COMPANY: 409 LIMIT_REACHED; deleting one makes room', async () => {
    const company = await freshCompany('Fence cap');
    const responses = await Promise.all(
      Array.from({ length: 5 }, (_, i) => v1(t, 'POST', '/geofences', company.key, { name: `F${i}`, area: circle })),
    );
    expect(responses.map((r) => r.statusCode).sort()).toEqual([201, 201, 201, 409, 409]);
    expect(responses.find((r) => r.statusCode === 409)!.json().error).toMatchObject({
      code: 'LIMIT_REACHED',
      details: { resource: 'geofences', limit: 3 },
    });
    const first = responses.find((r) => r.statusCode === 201)!.json().data.id;
    expect((await v1(t, 'DELETE', `/geofences/${first}`, company.key)).statusCode).toBe(200);
    expect((await v1(t, 'POST', '/geofences', company.key, { name: 'Again', area: circle })).statusCode).toBe(201);
  });

  it('deleting a geofence a subscription names is allowed; the subscription keeps the id', async () => {
    const company = await freshCompany('Watched fence');
    const fence = await createGeofence(company.key);
    const created = await subscribe(company.key, {
      vehicle_id: company.vehicle,
      webhook_url: hook,
      tier: 'premium',
      events: ['geo_fence_exit'],
      options: { geofence_ids: [fence.id] },
    });
    expect((await v1(t, 'DELETE', `/geofences/${fence.id}`, company.key)).statusCode).toBe(200);
    const fetched = (await v1(t, 'GET', `/subscriptions/${created.id}`, company.key)).json().data;
    expect(fetched).toMatchObject({ status: 'active', options: { geofence_ids: [fence.id] } });
  });
});

describe('tenant isolation', () => {
  it("answers 404 for another company's subscription and geofence on every route, and never lists them", async () => {
    const foreignSubscription = await subscribe(other.key, {
      vehicle_id: otherVehicle,
      webhook_url: hook,
      events: ['oil_change_needed'],
    });
    const foreignDelivery = await insertDelivery(
      t,
      { id: foreignSubscription.id, companyId: other.id, vehicleId: otherVehicle },
      {
        kind: 'oil_change_needed',
        status: 'failed',
        createdAt: new Date(),
        attempts: [{ at: new Date(), statusCode: 500, error: 'HTTP 500' }],
      },
    );
    const foreignFence = await createGeofence(other.key, { name: 'Theirs', area: circle });
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const calls: Array<['GET' | 'POST' | 'DELETE', string, unknown?]> = [
      ['GET', `/subscriptions/${foreignSubscription.id}`],
      ['GET', `/subscriptions/${foreignSubscription.id}/deliveries`],
      ['GET', `/subscriptions/${foreignSubscription.id}/deliveries?status=failed`],
      ['POST', `/subscriptions/${foreignSubscription.id}/dry-run`, { since }],
      ['DELETE', `/subscriptions/${foreignSubscription.id}`],
      ['GET', `/geofences/${foreignFence.id}`],
      ['DELETE', `/geofences/${foreignFence.id}`],
      ['GET', `/subscriptions/${uuidOf(5)}`],
      ['GET', '/subscriptions/not-a-uuid'],
      ['GET', '/subscriptions/not-a-uuid/deliveries'],
      ['POST', '/subscriptions/not-a-uuid/dry-run', { since }],
      ['DELETE', '/subscriptions/not-a-uuid'],
      ['GET', '/geofences/not-a-uuid'],
      ['DELETE', `/geofences/${uuidOf(6)}`],
      ['POST', `/deliveries/${foreignDelivery.id}/retry`],
      ['POST', `/subscriptions/${foreignSubscription.id}/recover`, { since }],
      ['POST', '/deliveries/not-a-uuid/retry'],
      ['POST', `/deliveries/${uuidOf(7)}/retry`],
      ['POST', '/subscriptions/not-a-uuid/recover', { since }],
    ];
    for (const [method, url, body] of calls) {
      const response = await v1(t, method, url, acme.key, body);
      expect(response.statusCode, `${method} ${url}`).toBe(404);
      expect(response.json().error.code).toBe('NOT_FOUND');
    }
    // Neither retry nor recover touched the other company's delivery.
    const untouched = await t.pool.query(
      `SELECT next_attempt_at, next_trigger FROM monitoring_deliveries WHERE id = $1`,
      [foreignDelivery.id],
    );
    expect(untouched.rows[0]).toEqual({ next_attempt_at: null, next_trigger: 'scheduled' });
    expect(
      (await v1(t, 'GET', '/subscriptions?status=active', acme.key)).json().data.map((s: { id: string }) => s.id),
    ).not.toContain(foreignSubscription.id);
    expect((await v1(t, 'GET', '/geofences', acme.key)).json().data.map((g: { id: string }) => g.id)).not.toContain(
      foreignFence.id,
    );
    // Their filter by our vehicle, and ours by theirs, find nothing.
    expect((await v1(t, 'GET', `/subscriptions?vehicle_id=${otherVehicle}`, acme.key)).json().meta.total).toBe(0);
    // The owner still has them, untouched.
    const still = await v1(t, 'GET', `/subscriptions/${foreignSubscription.id}`, other.key);
    expect(still.json().data).toMatchObject({ status: 'active', endpoint_health: { attempts: 1 } });
    expect((await v1(t, 'GET', `/geofences/${foreignFence.id}`, other.key)).statusCode).toBe(200);
  });
});

describe('the /v1 base', () => {
  it('documents its routes in the OpenAPI document with their schemas', async () => {
    const doc = (await t.app.inject('/openapi.json')).json();
    const operations: Array<[string, string]> = [
      ['/v1/runs/subscribe', 'post'],
      ['/v1/subscriptions', 'get'],
      ['/v1/subscriptions/{subscription_id}', 'get'],
      ['/v1/subscriptions/{subscription_id}', 'delete'],
      ['/v1/subscriptions/{subscription_id}/deliveries', 'get'],
      ['/v1/subscriptions/{subscription_id}/dry-run', 'post'],
      ['/v1/geofences', 'post'],
      ['/v1/geofences', 'get'],
      ['/v1/geofences/{geofence_id}', 'get'],
      ['/v1/geofences/{geofence_id}', 'delete'],
    ];
    for (const [path, method] of operations) {
      const operation = doc.paths[path]?.[method];
      expect(operation, `${method} ${path}`).toBeDefined();
      expect(operation.security).toEqual([{ bearerAuth: [] }]);
      expect(operation.responses['200'] ?? operation.responses['201']).toBeDefined();
    }
    const subscribeBody = doc.paths['/v1/runs/subscribe'].post.requestBody.content['application/json'].schema;
    expect(subscribeBody.required.sort()).toEqual(['events', 'vehicle_id', 'webhook_url']);
    expect(subscribeBody.properties.events.items.enum).toContain('low_battery');
    expect(subscribeBody.properties.options.properties.speed_limit_kph).toMatchObject({ minimum: 1, maximum: 300 });
  });

  it('unknown /v1 routes answer the 404 envelope', async () => {
    for (const url of ['/v1/nope', '/v1/subscriptions/x/y/z', '/v1/deliveries']) {
      const response = await v1(t, 'GET', url, acme.key);
      expect(response.statusCode, url).toBe(404);
      expect(response.json()).toMatchObject({ success: false, error: { code: 'NOT_FOUND' } });
    }
  });
});

describe('shared authentication and rate limit', () => {
  let limited: TestApp;
  beforeAll(async () => {
    // Three requests and a refusal in one rate-limit window.
    limited = await createTestApp({ RATE_LIMIT_PER_MINUTE: '3' }, midMinuteClock());
  });
  afterAll(() => limited.close());

  it('one key has one budget across /api/v1 and /v1; a revoked key is refused on both', async () => {
    const company = await limited.createCompany('Budget');
    for (let i = 0; i < 3; i++) expect((await limited.api('GET', '/runs', company.key)).statusCode).toBe(200);
    const refused = await v1(limited, 'GET', '/subscriptions', company.key);
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error.code).toBe('RATE_LIMITED');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);

    const revoked = await limited.createCompany('Revoked');
    const keys = (await limited.admin('GET', `/companies/${revoked.id}/api-keys`)).json().data;
    expect((await v1(limited, 'GET', '/geofences', revoked.key)).statusCode).toBe(200);
    expect((await limited.admin('DELETE', `/api-keys/${keys[0].id}`)).statusCode).toBe(200);
    expect((await v1(limited, 'GET', '/geofences', revoked.key)).statusCode).toBe(401);
    expect((await limited.api('GET', '/runs', revoked.key)).statusCode).toBe(401);
    expect((await v1(limited, 'GET', '/geofences', 'fk_nonsense')).statusCode).toBe(401);
  });
});

function uuidOf(n: number): string {
  return `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
}

async function countSubscriptions(companyId: string): Promise<number> {
  const { rows } = await t.pool.query(
    `SELECT count(*)::int AS n FROM monitoring_subscriptions WHERE company_id = $1 AND deleted_at IS NULL`,
    [companyId],
  );
  return rows[0].n;
}
