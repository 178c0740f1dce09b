import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let acme: { id: string; key: string };
let clock = new Date('2026-11-22T12:00:00Z');

beforeAll(async () => {
  t = await createTestApp({}, () => clock);
  acme = await t.createCompany();
});
afterAll(() => t.close());

async function put(id: string, body: unknown) {
  return t.api('PUT', `/vehicles/${id}`, acme.key, body);
}

describe('PUT /vehicles/{id}', () => {
  it('updates name and license_plate, moves updated_at, returns the vehicle', async () => {
    const vehicle = await t.createVehicle(acme.id);
    const response = await put(vehicle.id, { name: 'Van 7', license_plate: 'XYZ-999' });
    expect(response.statusCode).toBe(200);
    expect(response.json().data).toMatchObject({ id: vehicle.id, name: 'Van 7', license_plate: 'XYZ-999' });
    expect(Date.parse(response.json().data.updated_at)).toBeGreaterThan(Date.parse(vehicle.updated_at));
  });

  it('null clears a text field', async () => {
    const vehicle = await t.createVehicle(acme.id);
    expect((await put(vehicle.id, { license_plate: null })).json().data.license_plate).toBeNull();
  });

  it('writing the same values again does not move updated_at', async () => {
    const vehicle = await t.createVehicle(acme.id, { name: 'Same' });
    const response = await put(vehicle.id, { name: 'Same' });
    expect(response.json().data.updated_at).toBe(vehicle.updated_at);
  });

  it('records odometer_miles as a manual reading taken now, visible in signals.odometer', async () => {
    const vehicle = await t.createVehicle(acme.id);
    const response = await put(vehicle.id, { odometer_miles: 12_345.6 });
    expect(response.statusCode).toBe(200);
    const data = response.json().data;
    expect(data.signals.odometer).toEqual({
      km: 19_868.32,
      miles: 12_345.6,
      as_of: clock.toISOString(),
      source: 'manual',
    });
    expect(data.as_of).toBe(clock.toISOString());
    const { rows } = await t.pool.query(
      `SELECT signal, value_num, source, recorded_at FROM readings WHERE vehicle_id = $1`,
      [vehicle.id],
    );
    expect(rows).toEqual([
      { signal: 'odometer_km', value_num: 12_345.6 * 1.609344, source: 'manual', recorded_at: clock },
    ]);
    expect((await t.api('GET', `/vehicles/${vehicle.id}`, acme.key)).json().data.signals.odometer.miles).toBe(12_345.6);
  });

  it('409 ODOMETER_CONFLICT when the value would run the odometer backwards; nothing is written', async () => {
    const vehicle = await t.createVehicle(acme.id);
    await put(vehicle.id, { odometer_miles: 20_000 });
    clock = new Date(clock.getTime() + 60_000);
    const response = await put(vehicle.id, { odometer_miles: 19_999, name: 'must not change' });
    expect(response.statusCode).toBe(409);
    expect(response.json().error).toMatchObject({ code: 'ODOMETER_CONFLICT', details: { reason: 'backwards' } });
    const after = (await t.api('GET', `/vehicles/${vehicle.id}`, acme.key)).json().data;
    expect(after.signals.odometer.miles).toBe(20_000);
    expect(after.name).toBe('Van 1');
    const { rows } = await t.pool.query(`SELECT count(*)::int AS n FROM readings WHERE vehicle_id = $1`, [vehicle.id]);
    expect(rows[0].n).toBe(1);
    expect((await put(vehicle.id, { odometer_miles: 20_000 })).statusCode).toBe(200);
  });

  it('409 when the provider supplies a current ECU odometer; allowed once that reading is stale', async () => {
    const vehicle = await t.createVehicle(acme.id, { telematics_provider: 'samsara', provider_vehicle_id: '42' });
    const ecuAt = new Date(clock.getTime() - 3600_000);
    await t.pool.query(
      `UPDATE vehicles SET ecu_odometer_at = $2::timestamptz, link_broken = NULL,
         signals = jsonb_build_object('odometer', jsonb_build_object('km', 1000, 'as_of', $2::text, 'source', 'samsara'))
       WHERE id = $1`,
      [vehicle.id, ecuAt.toISOString()],
    );
    const refused = await put(vehicle.id, { odometer_miles: 5_000 });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().error).toMatchObject({
      code: 'ODOMETER_CONFLICT',
      details: { reason: 'provider_ecu_current' },
    });

    clock = new Date(ecuAt.getTime() + 8 * 24 * 3600_000);
    await t.pool.query(`UPDATE vehicles SET link_broken = $2 WHERE id = $1`, [
      vehicle.id,
      { reason: 'stale', since: ecuAt.toISOString(), tracker_km: null },
    ]);
    const accepted = await put(vehicle.id, { odometer_miles: 5_000 });
    expect(accepted.statusCode).toBe(200);
    expect(accepted.json().data.signals.odometer).toMatchObject({ miles: 5_000, source: 'manual' });
  });

  it('400 for any field other than license_plate, name and odometer_miles', async () => {
    const vehicle = await t.createVehicle(acme.id);
    for (const body of [
      { vin: '1HGCM82633A004352' },
      { name: 'ok', make: 'Ford' },
      { odometer_km: 5 },
      { health: {} },
    ]) {
      const response = await put(vehicle.id, body);
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      expect(response.json().error.code).toBe('INVALID_REQUEST');
      expect(response.json().error.details.errors[0].message).toBe('is not allowed');
    }
  });

  it('400 when no valid field is given', async () => {
    const vehicle = await t.createVehicle(acme.id);
    for (const body of [{}, { odometer_miles: null }]) {
      const response = await put(vehicle.id, body);
      expect(response.statusCode).toBe(400);
      expect(response.json().error.message).toMatch(/no valid field/);
    }
  });

  it('400 for validation errors: wrong types, negative odometer, overlong text, non-object body', async () => {
    const vehicle = await t.createVehicle(acme.id);
    const cases: Array<[unknown, string]> = [
      [{ odometer_miles: '12' }, 'odometer_miles'],
      [{ odometer_miles: -1 }, 'odometer_miles'],
      [{ name: 42 }, 'name'],
      [{ license_plate: 'x'.repeat(33) }, 'license_plate'],
      [[1, 2], 'body'],
    ];
    for (const [body, field] of cases) {
      const response = await put(vehicle.id, body);
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      expect(response.json().error.details.errors.map((e: { field: string }) => e.field)).toContain(field);
    }
    const malformed = await t.app.inject({
      method: 'PUT',
      url: `/api/v1/vehicles/${vehicle.id}`,
      headers: { authorization: `Bearer ${acme.key}`, 'content-type': 'application/json' },
      payload: '{"name":',
    });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().error.code).toBe('INVALID_REQUEST');
  });

  it('a write that waited on a lock is stamped after writes that committed meanwhile', async () => {
    const slow = await t.createVehicle(acme.id, { name: 'A' });
    const fast = await t.createVehicle(acme.id, { name: 'B' });
    const blocker = await t.pool.connect();
    await blocker.query('BEGIN');
    await blocker.query('SELECT id FROM vehicles WHERE id = $1 FOR UPDATE', [slow.id]);
    const blockerPid = (await blocker.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    const waiting = put(slow.id, { name: 'A2' });
    // The PUT is queued behind the row lock before the other write commits.
    const waitingOnBlocker = async () =>
      (
        await t.pool.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))`, [
          blockerPid,
        ])
      ).rows[0].n;
    await expect.poll(waitingOnBlocker, { timeout: 5000, interval: 5 }).toBe(1);
    const committed = (await put(fast.id, { name: 'B2' })).json().data;
    // Timestamps travel in milliseconds: the database clock leaves the committed write's one first.
    const pastCommitted = async () =>
      (
        await t.pool.query(`SELECT clock_timestamp() >= $1::timestamptz + interval '1 ms' AS past`, [
          committed.updated_at,
        ])
      ).rows[0].past;
    await expect.poll(pastCommitted, { timeout: 5000, interval: 1 }).toBe(true);
    await blocker.query('COMMIT');
    blocker.release();
    const late = (await waiting).json().data;
    expect(Date.parse(late.updated_at)).toBeGreaterThan(Date.parse(committed.updated_at));
    const polled = (await t.api('GET', `/vehicles?updated_since=${committed.updated_at}&limit=200`, acme.key)).json()
      .data;
    expect(polled.map((v: { name: string }) => v.name)).toContain('A2');
  });

  it("404 for another company's vehicle, which stays untouched", async () => {
    const other = await t.createCompany('Other');
    const foreign = await t.createVehicle(other.id, { name: 'Theirs' });
    const response = await put(foreign.id, { name: 'Mine now' });
    expect(response.statusCode).toBe(404);
    expect((await t.api('GET', `/vehicles/${foreign.id}`, other.key)).json().data.name).toBe('Theirs');
    expect((await put('nope', { name: 'x' })).statusCode).toBe(404);
  });
});
