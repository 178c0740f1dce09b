/**
 * The paid interfaces end to end (docs/pricing.md): instant verification by level with its odometer
 * confidence, tenant isolation, VIN refusals naming their rule, idempotent billing (replay,
 * reuse, a running duplicate, a dead claim, expiry after 24 hours), failures and refusals never
 * billed, and GET /v1/usage over UTC month boundaries with the monitoring bill.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { claimIdempotencyKey } from '../../src/db/idempotency.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { v1 } from '../helpers/monitoring.js';

let t: TestApp;
let clock = new Date('2026-11-15T12:00:00.000Z');
let acme: { id: string; key: string };
let other: { id: string; key: string };
let acmeVehicle: string;

const vin = '1HGCM82633A004352';
const otherVin = '1M8GDM9AXKP042788';
const kmPerMile = 1.609344;

function verify(key: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return t.app.inject({
    method: 'POST',
    url: '/v1/instant/verify',
    headers: { authorization: `Bearer ${key}`, ...headers },
    payload: body,
  });
}

async function ledger(companyId: string) {
  const result = await t.pool.query<{ product: string; tier: string; month: string; unitPriceMicros: string }>(
    `SELECT product, tier, to_char(month, 'YYYY-MM') AS month, unit_price_micros AS "unitPriceMicros"
     FROM usage_ledger WHERE company_id = $1 ORDER BY id`,
    [companyId],
  );
  return result.rows;
}

/** The read model as the ingest and health workers leave it. */
async function setVehicleState(
  vehicleId: string,
  state: { signals: Record<string, unknown>; linkBroken?: unknown; ecuOdometerAt?: Date | null },
) {
  await t.pool.query(`UPDATE vehicles SET signals = $2, link_broken = $3, ecu_odometer_at = $4 WHERE id = $1`, [
    vehicleId,
    JSON.stringify(state.signals),
    state.linkBroken === undefined || state.linkBroken === null ? null : JSON.stringify(state.linkBroken),
    state.ecuOdometerAt ?? null,
  ]);
}

const hoursAgo = (hours: number) => new Date(clock.getTime() - hours * 3_600_000);

beforeAll(async () => {
  t = await createTestApp({ RATE_LIMIT_PER_MINUTE: '1000' }, () => clock);
  acme = await t.createCompany('Acme Fleet');
  other = await t.createCompany('Other Fleet');
  acmeVehicle = (await t.createVehicle(acme.id, { vin, telematics_provider: 'samsara' })).id;
  await t.createVehicle(other.id, { vin: otherVin });
});
afterAll(() => t.close());
beforeEach(() => {
  clock = new Date('2026-11-15T12:00:00.000Z');
});

describe('instant verification levels', () => {
  beforeAll(async () => {
    await setVehicleState(acmeVehicle, {
      signals: {
        odometer: { km: 16093.44, as_of: hoursAgo(2).toISOString(), source: 'samsara' },
        location: {
          lat: 37.7929,
          lon: -122.4177,
          heading: 90,
          address: 'Hyde Street, San Francisco, CA',
          as_of: hoursAgo(1).toISOString(),
        },
        battery_voltage: 12.6,
        fuel_percent: 64,
        check_engine_light: false,
        tire_pressure_kpa: { front_left: 200, front_right: 240, rear_left: 241, rear_right: 239 },
        dtcs: [{ code: 'P0420', system: 'powertrain', mil: false }],
        engine_hours: 1234.5,
      },
      ecuOdometerAt: hoursAgo(2),
    });
  });

  it('basic: odometer in miles with confidence, location with the provider address; nothing more', async () => {
    const response = await verify(acme.key, { vin });
    expect(response.statusCode, response.body).toBe(200);
    const data = response.json().data;
    expect(Object.keys(data).sort()).toEqual(
      ['level', 'location', 'odometer', 'timestamp', 'verification_id', 'vin'].sort(),
    );
    expect(data).toMatchObject({
      vin,
      level: 'basic',
      timestamp: clock.toISOString(),
      odometer: { value: 10000, unit: 'miles', confidence: 'high', verified: true, source: 'samsara' },
      location: {
        latitude: 37.7929,
        longitude: -122.4177,
        address: 'Hyde Street, San Francisco, CA',
        address_source: 'provider',
      },
    });
  });

  it('standard adds condition; premium adds diagnostics', async () => {
    const standard = (await verify(acme.key, { vin, level: 'standard' })).json().data;
    expect(standard.condition).toEqual({
      battery_voltage: 12.6,
      battery_health: 'good',
      fuel_level: 64,
      check_engine: false,
      check_engine_light: false,
      tire_pressure: 'low',
      last_maintenance: null,
    });
    expect(standard.diagnostics).toBeUndefined();
    const premium = (await verify(acme.key, { vin, level: 'premium' })).json().data;
    expect(premium.diagnostics).toMatchObject({
      dtcs: [{ code: 'P0420', system: 'powertrain', mil: false }],
      tire_pressure_kpa: { front_left: 200, front_right: 240, rear_left: 241, rear_right: 239 },
      engine_hours: 1234.5,
      oil_life_percent: null,
      open_alerts: [],
    });
  });

  it('bills each level at its own price', async () => {
    const company = await t.createCompany('Levels');
    await t.createVehicle(company.id, { vin });
    for (const level of ['basic', 'standard', 'premium']) {
      expect((await verify(company.key, { vin, level })).statusCode).toBe(200);
    }
    expect((await ledger(company.id)).map((r) => [r.product, r.tier, Number(r.unitPriceMicros)])).toEqual([
      ['verification', 'basic', 500_000],
      ['verification', 'standard', 1_000_000],
      ['verification', 'premium', 2_000_000],
    ]);
  });
});

describe('odometer confidence from the link state and age', () => {
  let company: { id: string; key: string };
  let vehicle: string;
  beforeAll(async () => {
    company = await t.createCompany('Confidence');
    vehicle = (await t.createVehicle(company.id, { vin, telematics_provider: 'samsara' })).id;
  });

  it.each([
    ['a fresh ECU odometer, healthy link', 2, 'samsara', true, null, 'high', true],
    ['a 3-day-old ECU odometer', 72, 'samsara', true, null, 'medium', true],
    ['a GPS-derived odometer', 2, 'traccar', false, null, 'medium', true],
    ['a stale link', 200, 'samsara', true, { reason: 'stale', since: null, tracker_km: null }, 'low', false],
    [
      'a link in conflict, even fresh',
      1,
      'samsara',
      true,
      { reason: 'conflict', since: null, tracker_km: 5 },
      'low',
      false,
    ],
    ['a manual reading of last week', 24 * 7, 'manual', false, null, 'medium', false],
    ['a manual reading of two months ago', 24 * 60, 'manual', false, null, 'low', false],
  ])('%s: %s', async (_name, ageHours, source, ecu, linkBroken, confidence, verified) => {
    const asOf = hoursAgo(ageHours as number);
    await setVehicleState(vehicle, {
      signals: { odometer: { km: 1000, as_of: asOf.toISOString(), source } },
      linkBroken,
      ecuOdometerAt: ecu ? asOf : null,
    });
    const odometer = (await verify(company.key, { vin })).json().data.odometer;
    expect(odometer).toMatchObject({ confidence, verified, timestamp: asOf.toISOString() });
    expect(odometer.value).toBeCloseTo(1000 / kmPerMile, 2);
  });

  it('no odometer: value null, confidence none; no location: null', async () => {
    await setVehicleState(vehicle, {
      signals: {},
      linkBroken: { reason: 'no_reading', since: null, tracker_km: null },
    });
    const data = (await verify(company.key, { vin })).json().data;
    expect(data.odometer).toEqual({
      value: null,
      unit: 'miles',
      confidence: 'none',
      verified: false,
      timestamp: null,
      source: null,
    });
    expect(data.location).toBeNull();
  });

  it('a location without a provider address gets the nearest place; with none within 50 km, address null', async () => {
    await setVehicleState(vehicle, {
      signals: { location: { lat: 41.8, lon: -87.6, heading: null, as_of: clock.toISOString() } },
    });
    expect((await verify(company.key, { vin })).json().data.location).toEqual({
      latitude: 41.8,
      longitude: -87.6,
      address: 'Hyde Park, Illinois, US',
      address_source: 'nearest_place',
      timestamp: clock.toISOString(),
    });
    // The Gulf of Mexico.
    await setVehicleState(vehicle, {
      signals: { location: { lat: 27.5, lon: -90, heading: null, as_of: clock.toISOString() } },
    });
    expect((await verify(company.key, { vin })).json().data.location).toEqual({
      latitude: 27.5,
      longitude: -90,
      address: null,
      address_source: null,
      timestamp: clock.toISOString(),
    });
  });
});

describe('refusals are never billed', () => {
  it('another company’s VIN is 404, an unknown one too, an inactive vehicle too', async () => {
    const company = await t.createCompany('Isolation');
    const mine = (await t.createVehicle(company.id, { vin: 'KM8K2CAB4PU001140' })).id;
    expect((await verify(company.key, { vin: otherVin })).statusCode).toBe(404);
    expect((await verify(company.key, { vin: '11111111111111111' })).statusCode).toBe(404);
    expect((await t.admin('DELETE', `/vehicles/${mine}`)).statusCode).toBe(200);
    const response = await verify(company.key, { vin: 'KM8K2CAB4PU001140' });
    expect(response.statusCode).toBe(404);
    expect(response.json().error.code).toBe('NOT_FOUND');
    expect(await ledger(company.id)).toEqual([]);
  });

  it.each([
    ['1HGCM8263', 'length'],
    ['1HGCM82633A00435I', 'alphabet'],
    ['1HGCM82633A123456', 'check_digit'],
  ])('VIN %s: 400 naming the %s rule', async (bad, rule) => {
    const company = await t.createCompany('Bad VIN');
    const response = await verify(company.key, { vin: bad });
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toMatchObject({ code: 'INVALID_REQUEST', details: { rule } });
    expect(response.json().error.details.errors[0].field).toBe('vin');
    expect(await ledger(company.id)).toEqual([]);
  });

  it('an unknown level or an unknown field is 400 and unbilled', async () => {
    expect((await verify(acme.key, { vin, level: 'gold' })).statusCode).toBe(400);
    expect((await verify(acme.key, { vin, extra: 1 })).statusCode).toBe(400);
  });

  it('a rate-limited call answers 429 and is not billed', async () => {
    const limited = await createTestApp({ RATE_LIMIT_PER_MINUTE: '2' }, () => clock);
    try {
      const company = await limited.createCompany('Limited');
      await limited.createVehicle(company.id, { vin });
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        const response = await limited.app.inject({
          method: 'POST',
          url: '/v1/instant/verify',
          headers: { authorization: `Bearer ${company.key}` },
          payload: { vin },
        });
        statuses.push(response.statusCode);
      }
      expect(statuses).toEqual([200, 200, 429, 429]);
      const rows = await limited.pool.query(`SELECT count(*)::int AS n FROM usage_ledger WHERE company_id = $1`, [
        company.id,
      ]);
      expect(rows.rows[0].n).toBe(2);
    } finally {
      await limited.close();
    }
  });
});

describe('Idempotency-Key', () => {
  let company: { id: string; key: string };
  beforeAll(async () => {
    company = await t.createCompany('Retries');
    await t.createVehicle(company.id, { vin });
  });

  it('a retry returns the same bytes, marked replayed, and bills once', async () => {
    const first = await verify(company.key, { vin }, { 'idempotency-key': 'retry-1' });
    clock = new Date(clock.getTime() + 60_000);
    const second = await verify(company.key, { vin }, { 'idempotency-key': 'retry-1' });
    expect(first.statusCode).toBe(200);
    expect(second.statusCode).toBe(200);
    expect(second.body).toBe(first.body);
    expect(second.headers['content-type']).toBe(first.headers['content-type']);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(await ledger(company.id)).toHaveLength(1);
  });

  it('keys are per company: another company’s same key runs its own request', async () => {
    const again = await t.createCompany('Same key');
    await t.createVehicle(again.id, { vin });
    const mine = await verify(again.key, { vin }, { 'idempotency-key': 'retry-1' });
    expect(mine.headers['idempotent-replayed']).toBeUndefined();
    expect(await ledger(again.id)).toHaveLength(1);
  });

  it('the same key with another request is 422 and unbilled', async () => {
    await verify(company.key, { vin }, { 'idempotency-key': 'reuse' });
    const response = await verify(company.key, { vin, level: 'premium' }, { 'idempotency-key': 'reuse' });
    expect(response.statusCode).toBe(422);
    expect(response.json().error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect((await ledger(company.id)).filter((r) => r.tier === 'premium')).toEqual([]);
  });

  it('a duplicate while the first is still running is 409 with Retry-After; a claim abandoned for 2 minutes is taken over', async () => {
    const scope = { companyId: company.id, endpoint: '/v1/instant/verify', key: 'running' };
    const { requestHash } = await import('../../src/usage/metering.js');
    await claimIdempotencyKey(t.pool, scope, requestHash({ vin, level: 'basic' }), clock, 86_400, 120);
    const before = (await ledger(company.id)).length;
    const busy = await verify(company.key, { vin }, { 'idempotency-key': 'running' });
    expect(busy.statusCode).toBe(409);
    expect(busy.json().error.code).toBe('IDEMPOTENCY_KEY_IN_USE');
    expect(busy.headers['retry-after']).toBe('1');
    clock = new Date(clock.getTime() + 121_000);
    const taken = await verify(company.key, { vin }, { 'idempotency-key': 'running' });
    expect(taken.statusCode).toBe(200);
    expect(await ledger(company.id)).toHaveLength(before + 1);
  });

  it('concurrent duplicates: one runs and bills, the others wait (409) or replay', async () => {
    const before = (await ledger(company.id)).length;
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => verify(company.key, { vin }, { 'idempotency-key': 'burst' })),
    );
    const statuses = answers.map((a) => a.statusCode);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(1);
    expect(statuses.every((s) => s === 200 || s === 409)).toBe(true);
    const bodies = new Set(answers.filter((a) => a.statusCode === 200).map((a) => a.body));
    expect(bodies.size).toBe(1);
    expect(await ledger(company.id)).toHaveLength(before + 1);
  });

  it('a failed request releases its key: the retry runs (and bills) once it can succeed', async () => {
    const late = await t.createCompany('Late vehicle');
    const missing = await verify(late.key, { vin }, { 'idempotency-key': 'after-404' });
    expect(missing.statusCode).toBe(404);
    await t.createVehicle(late.id, { vin });
    const found = await verify(late.key, { vin }, { 'idempotency-key': 'after-404' });
    expect(found.statusCode).toBe(200);
    expect(found.headers['idempotent-replayed']).toBeUndefined();
    expect(await ledger(late.id)).toHaveLength(1);
  });

  it('a key is kept 24 hours: after that the same key is a new request', async () => {
    const kept = await t.createCompany('Kept');
    await t.createVehicle(kept.id, { vin });
    await verify(kept.key, { vin }, { 'idempotency-key': 'day' });
    clock = new Date(clock.getTime() + 24 * 3_600_000 - 1000);
    expect((await verify(kept.key, { vin }, { 'idempotency-key': 'day' })).headers['idempotent-replayed']).toBe('true');
    clock = new Date(clock.getTime() + 1000);
    expect(
      (await verify(kept.key, { vin }, { 'idempotency-key': 'day' })).headers['idempotent-replayed'],
    ).toBeUndefined();
    expect(await ledger(kept.id)).toHaveLength(2);
  });

  it('a key that is too long or not printable is 400', async () => {
    expect((await verify(company.key, { vin }, { 'idempotency-key': 'x'.repeat(256) })).statusCode).toBe(400);
    expect((await verify(company.key, { vin }, { 'idempotency-key': 'has space' })).statusCode).toBe(400);
  });
});

describe('GET /v1/usage', () => {
  it('counts in UTC months: the last second of November and the first of December', async () => {
    const company = await t.createCompany('Months');
    await t.createVehicle(company.id, { vin });
    clock = new Date('2026-11-30T23:59:59.999Z');
    await verify(company.key, { vin, level: 'premium' });
    clock = new Date('2026-12-01T00:00:00.000Z');
    await verify(company.key, { vin });
    await verify(company.key, { vin });
    const november = (await v1(t, 'GET', '/usage?month=2026-11', company.key)).json().data;
    const december = (await v1(t, 'GET', '/usage', company.key)).json().data;
    expect(november.month).toBe('2026-11');
    expect(november.products[1]).toMatchObject({ product: 'verification', quantity: 1, gross: 2, net: 2 });
    expect(november.daily).toHaveLength(30);
    expect(november.daily[29]).toEqual({ date: '2026-11-30', history_report: 0, verification: 1 });
    expect(november.total).toBe(2);
    expect(november.projected_total).toBe(2);
    expect(december.month).toBe('2026-12');
    expect(december.products[1]).toMatchObject({ quantity: 2, gross: 1, discount: 0, net: 1 });
    expect(december.daily).toEqual([{ date: '2026-12-01', history_report: 0, verification: 2 }]);
  });

  it('answers the docs/pricing.md shape with the additive discount tier, next tier and projection', async () => {
    const company = await t.createCompany('Shape');
    await t.createVehicle(company.id, { vin });
    clock = new Date('2026-11-11T00:00:00.000Z'); // a third of November gone
    for (let i = 0; i < 3; i++) await verify(company.key, { vin });
    const usage = (await v1(t, 'GET', '/usage?month=2026-11', company.key)).json().data;
    expect(Object.keys(usage).sort()).toEqual(
      ['currency', 'daily', 'month', 'products', 'projected_total', 'total'].sort(),
    );
    expect(usage.currency).toBe('USD');
    expect(usage.products.map((p: { product: string }) => p.product)).toEqual([
      'history_report',
      'verification',
      'monitoring',
    ]);
    expect(usage.products[1]).toEqual({
      product: 'verification',
      quantity: 3,
      gross: 1.5,
      discount: 0,
      net: 1.5,
      lines: [
        { tier: 'basic', quantity: 3, unit_price: 0.5, gross: 1.5 },
        { tier: 'standard', quantity: 0, unit_price: 1, gross: 0 },
        { tier: 'premium', quantity: 0, unit_price: 2, gross: 0 },
      ],
      discount_tier: { percent_off: 0, from_unit: 1, custom_pricing: false },
      next_discount_tier: { percent_off: 10, from_unit: 1000, custom_pricing: false, units_to_go: 997 },
      custom_pricing: false,
      projected: { quantity: 9, net: 4.5 },
    });
    expect(usage.total).toBe(1.5);
    expect(usage.projected_total).toBe(4.5);
  });

  it('prices the month’s count with the graduated discount (the 100th report is 15 % off)', async () => {
    const company = await t.createCompany('Volume');
    clock = new Date('2026-10-20T00:00:00.000Z');
    await t.pool.query(
      `INSERT INTO usage_ledger (company_id, product, tier, unit_price_micros, request_key, month, billed_at)
       SELECT $1, 'history_report', 'basic', 5000000, 'r' || n, '2026-10-01', $2::timestamptz + n * interval '1 second'
       FROM generate_series(1, 101) n`,
      [company.id, new Date('2026-10-02T00:00:00Z')],
    );
    const report = (await v1(t, 'GET', '/usage?month=2026-10', company.key)).json().data.products[0];
    expect(report).toMatchObject({
      quantity: 101,
      gross: 505,
      discount: 1.5,
      net: 503.5,
      discount_tier: { percent_off: 15, from_unit: 100 },
      next_discount_tier: { percent_off: 25, from_unit: 1000, units_to_go: 899 },
    });
  });

  it('bills a monitored vehicle once per month at its highest tier that month', async () => {
    const company = await t.createCompany('Monitored');
    const a = (await t.createVehicle(company.id, { vin })).id;
    const b = (await t.createVehicle(company.id, { vin: 'KM8K2CAB4PU001140' })).id;
    const subscribe = (vehicleId: string, tier: string, createdAt: string, deletedAt: string | null) =>
      t.pool.query(
        `INSERT INTO monitoring_subscriptions (company_id, vehicle_id, webhook_url, events, tier, secret_ciphertext, created_at, deleted_at)
         VALUES ($1, $2, 'https://example.com/hook', ARRAY['oil_change_needed'], $3, '\\x00', $4, $5)`,
        [company.id, vehicleId, tier, createdAt, deletedAt],
      );
    await subscribe(a, 'basic', '2026-09-10T00:00:00Z', null);
    await subscribe(a, 'premium', '2026-10-05T00:00:00Z', '2026-10-06T00:00:00Z');
    await subscribe(b, 'standard', '2026-09-01T00:00:00Z', '2026-09-30T23:59:59Z');
    clock = new Date('2026-11-02T00:00:00.000Z');
    const usageOf = async (month: string) =>
      (await v1(t, 'GET', `/usage?month=${month}`, company.key)).json().data.products[2];
    expect((await usageOf('2026-09')).lines.map((l: { quantity: number }) => l.quantity)).toEqual([1, 1, 0]);
    const october = await usageOf('2026-10');
    expect(october).toMatchObject({ product: 'monitoring', quantity: 1, gross: 5, net: 5 });
    expect(october.lines.find((l: { tier: string }) => l.tier === 'premium').quantity).toBe(1);
    expect(await usageOf('2026-11')).toMatchObject({ quantity: 1, gross: 1 });
    expect(await usageOf('2026-08')).toMatchObject({ quantity: 0, gross: 0 });
  });

  it('is the caller’s own: another company sees none of it; a future month or a bad one is 400', async () => {
    const fresh = await t.createCompany('Fresh');
    const usage = (await v1(t, 'GET', '/usage?month=2026-11', fresh.key)).json().data;
    expect(usage.total).toBe(0);
    expect(usage.products.every((p: { quantity: number }) => p.quantity === 0)).toBe(true);
    expect((await v1(t, 'GET', '/usage?month=2027-01', fresh.key)).statusCode).toBe(400);
    expect((await v1(t, 'GET', '/usage?month=2026-13', fresh.key)).statusCode).toBe(400);
    expect((await v1(t, 'GET', '/usage?month=november', fresh.key)).statusCode).toBe(400);
    expect((await v1(t, 'GET', '/usage', 'bad-key')).statusCode).toBe(401);
  });
});
