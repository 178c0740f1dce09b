import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let acme: { id: string; key: string };
let other: { id: string; key: string };

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.createCompany('Acme');
  other = await t.createCompany('Globex');
});
afterAll(() => t.close());

const vehicleFields = [
  'id',
  'name',
  'license_plate',
  'vin',
  'make',
  'model',
  'year',
  'telematics_provider',
  'as_of',
  'updated_at',
  'health',
  'signals',
  'link_broken',
];

describe('GET /vehicles/{id}', () => {
  it('returns every Vehicle field of the spec in the envelope', async () => {
    const created = await t.createVehicle(acme.id, {
      name: 'Truck 12',
      telematics_provider: 'samsara',
      provider_vehicle_id: '281474977075805',
    });
    const response = await t.api('GET', `/vehicles/${created.id}`, acme.key);
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.success).toBe(true);
    expect(Object.keys(body.data).sort()).toEqual([...vehicleFields].sort());
    expect(body.data).toMatchObject({
      id: created.id,
      name: 'Truck 12',
      vin: '1HGCM82633A004352',
      telematics_provider: 'samsara',
      as_of: null,
      health: { status: 'unknown', alerts: [] },
      signals: {},
      link_broken: { reason: 'no_reading', since: null, tracker_km: null },
    });
    expect(body.meta).toMatchObject({ version: '1.0.0', limit: null, offset: null, total: null });
    expect(new Date(body.meta.timestamp).toString()).not.toBe('Invalid Date');
  });

  it('a manually tracked vehicle has link_broken null', async () => {
    const created = await t.createVehicle(acme.id, { telematics_provider: null });
    expect((await t.api('GET', `/vehicles/${created.id}`, acme.key)).json().data.link_broken).toBeNull();
  });

  it("another company's vehicle, a deactivated one, an unknown id and a non-UUID all answer 404", async () => {
    const foreign = await t.createVehicle(other.id);
    const retired = await t.createVehicle(acme.id);
    await t.admin('DELETE', `/vehicles/${retired.id}`);
    for (const id of [foreign.id, retired.id, '6f1c1a3e-0000-4000-8000-000000000000', 'not-a-uuid', "1' OR '1'='1"]) {
      const response = await t.api('GET', `/vehicles/${encodeURIComponent(id)}`, acme.key);
      expect(response.statusCode, id).toBe(404);
      expect(response.json()).toMatchObject({
        success: false,
        error: { code: 'NOT_FOUND', message: 'vehicle not found' },
      });
    }
  });
});

describe('GET /vehicles', () => {
  let fleet: { id: string; key: string };
  const ids: string[] = [];

  beforeAll(async () => {
    fleet = await t.createCompany('Paging Fleet');
    for (let i = 0; i < 7; i++) ids.push((await t.createVehicle(fleet.id, { name: `V${i}` })).id);
    // Deterministic activity times, with a tie between V2 and V3 to exercise the id tie-break.
    const times = [
      '2026-11-01T00:00:00Z',
      '2026-11-02T00:00:00Z',
      '2026-11-03T00:00:00Z',
      '2026-11-03T00:00:00Z',
      '2026-11-04T00:00:00Z',
      '2026-11-05T00:00:00.250Z',
      '2026-11-06T00:00:00Z',
    ];
    for (const [i, time] of times.entries())
      await t.pool.query('UPDATE vehicles SET updated_at = $2 WHERE id = $1', [ids[i], time]);
    const retired = await t.createVehicle(fleet.id, { name: 'retired' });
    await t.admin('DELETE', `/vehicles/${retired.id}`);
  });

  async function all(query: string): Promise<any[]> {
    const response = await t.api('GET', `/vehicles${query}`, fleet.key);
    expect(response.statusCode).toBe(200);
    return response.json().data;
  }

  it('lists only active vehicles of the caller, newest activity first with a stable id tie-break', async () => {
    const { rows } = await t.pool.query(
      `SELECT id FROM vehicles WHERE company_id = $1 AND active ORDER BY updated_at DESC, id DESC`,
      [fleet.id],
    );
    const listed = await all('?limit=200');
    expect(listed.map((v) => v.id)).toEqual(rows.map((r) => r.id));
    expect(listed).toHaveLength(7);
    expect(listed.map((v) => v.name)).not.toContain('retired');
  });

  it('pages through every offset without gaps or repeats', async () => {
    const full = (await all('?limit=200')).map((v) => v.id);
    for (const limit of [1, 2, 3, 7]) {
      const paged: string[] = [];
      for (let offset = 0; offset < full.length + limit; offset += limit) {
        const response = await t.api('GET', `/vehicles?limit=${limit}&offset=${offset}`, fleet.key);
        expect(response.json().meta).toMatchObject({ limit, offset, total: null });
        paged.push(...response.json().data.map((v: { id: string }) => v.id));
      }
      expect(paged).toEqual(full);
    }
  });

  it('updated_since is inclusive: the cursor record comes back', async () => {
    const listed = await all('?updated_since=2026-11-05T00:00:00.250Z');
    expect(listed.map((v) => v.name)).toEqual(['V6', 'V5']);
    expect((await all('?updated_since=2026-11-05T00:00:00.251Z')).map((v) => v.name)).toEqual(['V6']);
    // The same instant written with an offset.
    expect(
      (await all(`?updated_since=${encodeURIComponent('2026-11-05T01:00:00.250+01:00')}`)).map((v) => v.name),
    ).toEqual(['V6', 'V5']);
    // The updated_at a client saw, passed back as the cursor, returns that record again.
    const newest = listed[1];
    expect((await all(`?updated_since=${newest.updated_at}`)).map((v) => v.id)).toContain(newest.id);
  });

  it('include_total adds meta.total; without it total is null', async () => {
    const withTotal = (
      await t.api('GET', '/vehicles?include_total=true&limit=2&updated_since=2026-11-03T00:00:00Z', fleet.key)
    ).json();
    expect(withTotal.meta).toMatchObject({ total: 5, limit: 2, offset: 0 });
    expect(withTotal.data).toHaveLength(2);
    expect((await t.api('GET', '/vehicles', fleet.key)).json().meta).toMatchObject({
      total: null,
      limit: 50,
      offset: 0,
    });
  });

  it("never lists another company's vehicles", async () => {
    const foreignIds = new Set(
      (await t.api('GET', '/vehicles?limit=200', acme.key)).json().data.map((v: { id: string }) => v.id),
    );
    for (const id of ids) expect(foreignIds.has(id)).toBe(false);
  });

  it('answers 400 INVALID_REQUEST with the field for each bad query parameter', async () => {
    const cases: Array<[string, string]> = [
      ['limit=0', 'limit'],
      ['limit=201', 'limit'],
      ['limit=abc', 'limit'],
      ['offset=-1', 'offset'],
      ['updated_since=yesterday', 'updated_since'],
      ['updated_since=2026-11-01', 'updated_since'],
      ['include_total=maybe', 'include_total'],
      ['colour=red', 'colour'],
      ['updated_since=2016-12-31T23:59:60Z', 'updated_since'],
    ];
    for (const [query, field] of cases) {
      const response = await t.api('GET', `/vehicles?${query}`, fleet.key);
      expect(response.statusCode, query).toBe(400);
      const body = response.json();
      expect(body.error.code).toBe('INVALID_REQUEST');
      expect(
        body.error.details.errors.map((e: { field: string }) => e.field),
        query,
      ).toContain(field);
    }
  });
});

describe('presented vehicles served from the per-process cache', () => {
  it('never serves a stale vehicle: every write shows on the next read, by id and in the list, even one that keeps updated_at', async () => {
    const company = await t.createCompany('Cache Co');
    const vehicle = await t.createVehicle(company.id, { name: 'C1' });
    const byId = async () => (await t.api('GET', `/vehicles/${vehicle.id}`, company.key)).json().data;
    const inList = async () =>
      (await t.api('GET', '/vehicles?limit=200', company.key))
        .json()
        .data.find((v: { id: string }) => v.id === vehicle.id);

    const first = await byId();
    expect(await byId()).toEqual(first); // served from the cache: same content
    expect(await inList()).toEqual(first);

    // A last-seen write: as_of and a signal's observed_at move, updated_at (the polling cursor) does not.
    await t.pool.query(
      `UPDATE vehicles SET as_of = '2026-11-24T08:00:00Z',
              signals = signals || '{"fuel_percent": 55, "observed_at": {"fuel_percent": "2026-11-24T08:00:00Z"}}'
        WHERE id = $1`,
      [vehicle.id],
    );
    for (const read of [byId, inList]) {
      const seen = await read();
      expect(seen.as_of).toBe('2026-11-24T08:00:00.000Z');
      expect(seen.signals.fuel_percent).toBe(55);
      expect(seen.updated_at).toBe(first.updated_at);
    }

    // Deactivated: gone from both at once.
    expect((await t.admin('DELETE', `/vehicles/${vehicle.id}`)).statusCode).toBe(200);
    expect((await t.api('GET', `/vehicles/${vehicle.id}`, company.key)).statusCode).toBe(404);
    expect(await inList()).toBeUndefined();
  });

  it('answers the same bytes as the response schema would: no undeclared field leaks from the stored row', async () => {
    const company = await t.createCompany('Leak Co');
    const vehicle = await t.createVehicle(company.id, { name: 'L1' });
    await t.pool.query(`UPDATE vehicles SET health = health || '{"internal_note": "x"}' WHERE id = $1`, [vehicle.id]);
    const response = await t.api('GET', `/vehicles/${vehicle.id}`, company.key);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = response.json();
    expect(Object.keys(body)).toEqual(['success', 'data', 'meta']);
    expect(Object.keys(body.data).sort()).toEqual([...vehicleFields].sort());
    expect(JSON.stringify(body)).not.toContain('internal_note');
  });
});

describe('by-id reads probing first and loading first (src/api/by-id-read-policy.ts)', () => {
  it('answers fresh after every write and 404 for another company or a deactivated vehicle, either way', async () => {
    const company = await t.createCompany('Mode Co');
    const stranger = await t.createCompany('Stranger Co');
    const vehicle = await t.createVehicle(company.id, { name: 'M0' });
    const url = `/vehicles/${vehicle.id}`;
    // Which of the by-id statements the app runs, from the pool it reads through (no replica here).
    const spy = vi.spyOn(t.pool, 'query');
    const named = () =>
      spy.mock.calls
        .map(([config]) => (config as { name?: string }).name)
        .filter((name) => name === 'find-active-vehicle-version' || name === 'find-active-vehicles-with-versions');
    const byId = async (key = company.key) => {
      spy.mockClear();
      const response = await t.api('GET', url, key);
      return { status: response.statusCode, name: response.json().data?.name, statements: named() };
    };
    const rename = async (name: string) =>
      expect((await t.api('PUT', url, company.key, { name })).statusCode).toBe(200);
    try {
      // Unchanged between reads: hits, so the version is probed and the row never loaded again.
      for (let i = 0; i < 20; i++) await byId();
      expect(await byId()).toEqual({ status: 200, name: 'M0', statements: ['find-active-vehicle-version'] });
      await rename('M1');
      expect(await byId()).toEqual({
        status: 200,
        name: 'M1',
        statements: ['find-active-vehicle-version', 'find-active-vehicles-with-versions'],
      });
      expect(await byId(stranger.key)).toEqual({
        status: 404,
        name: undefined,
        statements: ['find-active-vehicle-version'],
      });

      // A write before every read: misses, so the row is loaded at once, one statement per read.
      for (let i = 2; i < 22; i++) {
        await rename(`M${i}`);
        expect((await byId()).name).toBe(`M${i}`);
      }
      await rename('M22');
      expect(await byId()).toEqual({ status: 200, name: 'M22', statements: ['find-active-vehicles-with-versions'] });
      expect(await byId()).toEqual({ status: 200, name: 'M22', statements: ['find-active-vehicles-with-versions'] });
      expect(await byId(stranger.key)).toEqual({
        status: 404,
        name: undefined,
        statements: ['find-active-vehicles-with-versions'],
      });
      expect((await t.admin('DELETE', url)).statusCode).toBe(200);
      expect(await byId()).toEqual({
        status: 404,
        name: undefined,
        statements: ['find-active-vehicles-with-versions'],
      });
    } finally {
      spy.mockRestore();
    }
  });
});
