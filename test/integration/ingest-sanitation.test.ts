/**
 * The shared sanitation through the real push endpoint and worker: what Postgres cannot store, or
 * should not, is dropped and counted in `skipped`; the rest of the payload is stored, nothing is
 * parked, and later pushes flow.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createConnection, drainInbox, pushGeneric } from '../helpers/ingest.js';

let t: TestApp;
let company: { id: string; key: string };
let connection: { id: string; secret: string };
let truck: Record<string, any>;

beforeAll(async () => {
  t = await createTestApp();
  company = await t.createCompany();
  const created = await createConnection(t, company.id, 'generic');
  connection = { id: created.id, secret: created.generated_secret! };
  truck = await t.createVehicle(company.id, { provider_connection_id: connection.id, provider_vehicle_id: 'truck-1' });
  await t.startWorkers(['ingest']);
});
afterAll(() => t.close());

async function push(readings: unknown[]): Promise<number> {
  const response = await pushGeneric(t, 'generic', connection.id, connection.secret, { readings });
  expect(response.statusCode).toBe(202);
  return response.json().data.inbox_id;
}

async function inboxRow(id: number) {
  const { rows } = await t.pool.query(
    `SELECT processed_at IS NOT NULL AS processed, parked_at, error, samples_count, skipped_count, unmapped_count
     FROM ingest_inbox WHERE id = $1`,
    [id],
  );
  return rows[0];
}

describe('hostile pushes', () => {
  it('the year-0 timestamp of issue 8 is dropped and counted, never stalls the connection', async () => {
    const id = await push([
      { vehicle: 'truck-1', ts: '0000-01-01T00:00:00Z', signals: { fuel_percent: 10 } },
      { vehicle: 'truck-1', ts: '2026-11-20T09:00:00Z', signals: { fuel_percent: 20 } },
    ]);
    const later = await push([{ vehicle: 'truck-1', ts: '2026-11-20T09:01:00Z', signals: { fuel_percent: 21 } }]);
    await drainInbox(t);
    expect(await inboxRow(id)).toEqual({
      processed: true,
      parked_at: null,
      error: null,
      samples_count: 1,
      skipped_count: 1,
      unmapped_count: 0,
    });
    expect((await inboxRow(later)).samples_count).toBe(1);
  });

  it('drops NUL characters, lone surrogates, out-of-range times, overlong ids, names and values, and reserved names', async () => {
    const ts = '2026-11-20T10:00:00Z';
    const id = await push([
      {
        vehicle: 'truck-1',
        ts,
        signals: {
          fuel_percent: 60,
          odometer_km: 1000,
          door_codes: { front: 'closed', list: [1, 2] },
          odometer: 999_999,
          observed_at: { fuel_percent: '2099-01-01T00:00:00Z' },
          location: 'garage',
          'door\u0000state': 1,
          note: 'a\u0000b',
          nested: { deep: ['fine', { key: 'v\u0000' }] },
          lone: 'broken \ud800',
          blob: 'x'.repeat(5000),
          ['s'.repeat(65)]: 1,
        },
      },
      { vehicle: 'truck-1', ts: '1999-12-31T23:59:59Z', signals: { fuel_percent: 10 } },
      { vehicle: 'truck-1', ts: '2099-01-01T00:00:00Z', signals: { fuel_percent: 11 } },
      { vehicle: 'truck\u00001', ts, signals: { fuel_percent: 12 } },
      { vehicle: 'v'.repeat(201), ts, signals: { fuel_percent: 13 } },
    ]);
    await drainInbox(t);
    // 3 stored; 13 skipped: `location` by the adapter's own check, the other 12 by the sanitation.
    expect(await inboxRow(id)).toEqual({
      processed: true,
      parked_at: null,
      error: null,
      samples_count: 3,
      skipped_count: 13,
      unmapped_count: 0,
    });
    const { rows } = await t.pool.query(
      `SELECT signal, coalesce(to_jsonb(value_num), value_json) AS value FROM readings
       WHERE vehicle_id = $1 AND recorded_at = $2 ORDER BY signal`,
      [truck.id, ts],
    );
    expect(rows).toEqual([
      { signal: 'door_codes', value: { front: 'closed', list: [1, 2] } },
      { signal: 'fuel_percent', value: 60 },
      { signal: 'odometer_km', value: 1000 },
    ]);
    const unmapped = await t.pool.query(`SELECT count(*)::int AS n FROM unmapped_vehicles`);
    expect(unmapped.rows[0].n).toBe(0);

    // The read model's own fields were not overwritten by the provider's keys.
    const vehicle = (await t.api('GET', `/vehicles/${truck.id}`, company.key)).json().data;
    expect(vehicle.signals.odometer).toBeUndefined();
    expect(vehicle.signals.observed_at).toMatchObject({
      fuel_percent: '2026-11-20T10:00:00.000Z',
      door_codes: '2026-11-20T10:00:00.000Z',
    });
    expect(vehicle.signals.door_codes).toEqual({ front: 'closed', list: [1, 2], as_of: '2026-11-20T10:00:00.000Z' });
  });

  it('answers 400 to a body with a raw NUL character (an OsmAnd form), storing nothing', async () => {
    const traccar = await createConnection(t, company.id, 'traccar');
    const before = await t.pool.query(`SELECT count(*)::int AS n FROM ingest_inbox`);
    const response = await t.app.inject({
      method: 'POST',
      url: new URL(traccar.ingest_url!).pathname,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'id=truck-1&lat=41.8&lon=-87.6&note=a\u0000b',
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({
      success: false,
      error: { code: 'INVALID_REQUEST', details: { errors: [{ field: 'body', message: 'contains a NUL byte' }] } },
    });
    const after = await t.pool.query(`SELECT count(*)::int AS n FROM ingest_inbox`);
    expect(after.rows[0].n).toBe(before.rows[0].n);
  });

  it('keeps the connection flowing after hostile pushes', async () => {
    const id = await push([{ vehicle: 'truck-1', ts: '2026-11-20T10:05:00Z', signals: { fuel_percent: 59 } }]);
    await drainInbox(t);
    expect(await inboxRow(id)).toMatchObject({ processed: true, samples_count: 1, skipped_count: 0 });
    const { rows } = await t.pool.query(`SELECT count(*)::int AS n FROM ingest_inbox WHERE parked_at IS NOT NULL`);
    expect(rows[0].n).toBe(0);
  });
});
