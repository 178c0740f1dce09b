import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hmacHex } from '../../providers/signing.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createConnection, settle, pushGeneric, readingCount } from '../helpers/ingest.js';

let t: TestApp;
let acme: { id: string; key: string };
let connection: { id: string; secret: string };
let truck: Record<string, any>;

beforeAll(async () => {
  t = await createTestApp({ INGEST_BODY_LIMIT_BYTES: '65536' });
  acme = await t.createCompany();
  const created = await createConnection(t, acme.id, 'generic');
  connection = { id: created.id, secret: created.generated_secret! };
  truck = await t.createVehicle(acme.id, {
    name: 'Truck 1',
    provider_connection_id: connection.id,
    provider_vehicle_id: 'truck-1',
  });
  await t.startWorkers(['ingest', 'health']);
});
afterAll(() => t.close());

const reading = (ts: string, signals: Record<string, unknown>, vehicle = 'truck-1') => ({ vehicle, ts, signals });

async function inboxRows(): Promise<number> {
  const { rows } = await t.pool.query(`SELECT count(*)::int AS n FROM ingest_inbox`);
  return rows[0].n;
}

describe('generic push', () => {
  it('stores the raw payload, answers 202, and the worker makes it visible on the vehicle', async () => {
    const payload = {
      readings: [
        reading('2026-11-20T10:00:00Z', {
          fuel_percent: 62,
          odometer_km: 10_000.5,
          location: { lat: 41.85, lon: -87.65, heading: 90 },
        }),
      ],
    };
    const response = await pushGeneric(t, 'generic', connection.id, connection.secret, payload);
    expect(response.statusCode).toBe(202);
    const accepted = response.json().data;
    expect(accepted.inbox_id).toBeGreaterThan(0);
    const { rows } = await t.pool.query(`SELECT payload, provider FROM ingest_inbox WHERE id = $1`, [
      accepted.inbox_id,
    ]);
    expect(rows[0]).toEqual({ payload: JSON.stringify(payload), provider: 'generic' });
    await settle(t);
    const vehicle = (await t.api('GET', `/vehicles/${truck.id}`, acme.key)).json().data;
    expect(vehicle.signals).toMatchObject({
      fuel_percent: 62,
      odometer: { km: 10_000.5, miles: 6214.02, as_of: '2026-11-20T10:00:00.000Z', source: 'generic' },
      location: { lat: 41.85, lon: -87.65, heading: 90, as_of: '2026-11-20T10:00:00.000Z' },
      observed_at: { fuel_percent: '2026-11-20T10:00:00.000Z' },
    });
    expect(vehicle.as_of).toBe('2026-11-20T10:00:00.000Z');
    expect(await readingCount(t, truck.id)).toBe(3);
  });

  it('is idempotent: the same payload again adds no readings', async () => {
    const payload = { readings: [reading('2026-11-20T11:00:00Z', { fuel_percent: 61, speed_kph: 40 })] };
    await pushGeneric(t, 'generic', connection.id, connection.secret, payload);
    await settle(t);
    const before = await readingCount(t, truck.id);
    await pushGeneric(t, 'generic', connection.id, connection.secret, payload);
    await settle(t);
    expect(await readingCount(t, truck.id)).toBe(before);
  });

  it('out-of-order arrival never overwrites newer state; old samples are still kept as readings', async () => {
    await pushGeneric(t, 'generic', connection.id, connection.secret, {
      readings: [reading('2026-11-20T12:00:00Z', { fuel_percent: 55 })],
    });
    await settle(t);
    const before = await readingCount(t, truck.id);
    await pushGeneric(t, 'generic', connection.id, connection.secret, {
      readings: [reading('2026-11-20T09:00:00Z', { fuel_percent: 90 })],
    });
    await settle(t);
    const vehicle = (await t.api('GET', `/vehicles/${truck.id}`, acme.key)).json().data;
    expect(vehicle.signals.fuel_percent).toBe(55);
    expect(vehicle.signals.observed_at.fuel_percent).toBe('2026-11-20T12:00:00.000Z');
    expect(await readingCount(t, truck.id)).toBe(before + 1);
  });

  it('moves updated_at only when a value changes, not when the same value is seen again', async () => {
    await pushGeneric(t, 'generic', connection.id, connection.secret, {
      readings: [reading('2026-11-20T13:00:00Z', { fuel_percent: 50 })],
    });
    await settle(t);
    const changed = (await t.api('GET', `/vehicles/${truck.id}`, acme.key)).json().data;
    await pushGeneric(t, 'generic', connection.id, connection.secret, {
      readings: [reading('2026-11-20T13:05:00Z', { fuel_percent: 50 })],
    });
    await settle(t);
    const same = (await t.api('GET', `/vehicles/${truck.id}`, acme.key)).json().data;
    expect(same.updated_at).toBe(changed.updated_at);
    expect(same.signals.observed_at.fuel_percent).toBe('2026-11-20T13:05:00.000Z');
    await pushGeneric(t, 'generic', connection.id, connection.secret, {
      readings: [reading('2026-11-20T13:10:00Z', { fuel_percent: 49 })],
    });
    await settle(t);
    const moved = (await t.api('GET', `/vehicles/${truck.id}`, acme.key)).json().data;
    expect(Date.parse(moved.updated_at)).toBeGreaterThan(Date.parse(same.updated_at));
    const polled = (
      await t.api('GET', `/vehicles?updated_since=${encodeURIComponent(moved.updated_at)}`, acme.key)
    ).json().data;
    expect(polled.map((v: { id: string }) => v.id)).toEqual([truck.id]);
  });

  it('counts samples of unmapped vehicles, shows them to the operator, and keeps them for replay', async () => {
    await pushGeneric(t, 'generic', connection.id, connection.secret, {
      readings: [
        reading('2026-11-20T10:00:00Z', { fuel_percent: 10, speed_kph: 3 }, 'van-9'),
        reading('2026-11-20T10:01:00Z', { fuel_percent: 9 }, 'van-9'),
      ],
    });
    await settle(t);
    const detail = (await t.admin('GET', `/provider-connections/${connection.id}`)).json().data;
    expect(detail.unmapped_vehicles).toEqual([
      {
        provider_vehicle_id: 'van-9',
        first_seen_at: '2026-11-20T10:00:00.000Z',
        last_seen_at: '2026-11-20T10:01:00.000Z',
        samples_count: 3,
      },
    ]);
    const { rows } = await t.pool.query(`SELECT unmapped_count FROM ingest_inbox ORDER BY id DESC LIMIT 1`);
    expect(rows[0].unmapped_count).toBe(3);
  });
});

describe('push verification and failures write nothing', () => {
  it('401 for a missing, wrong or tampered signature', async () => {
    const before = await inboxRows();
    const body = JSON.stringify({ readings: [] });
    const cases = [
      {},
      { 'x-signature': `sha256=${hmacHex('sha256', 'not-the-secret', body)}` },
      { 'x-signature': `sha256=${hmacHex('sha256', connection.secret, `${body} `)}` },
      { 'x-signature': hmacHex('sha256', connection.secret, body) },
    ];
    for (const headers of cases) {
      const response = await t.app.inject({
        method: 'POST',
        url: `/ingest/v1/generic/${connection.id}`,
        headers: { 'content-type': 'application/json', ...headers },
        payload: body,
      });
      expect(response.statusCode).toBe(401);
      expect(response.json().error.code).toBe('UNAUTHORIZED');
    }
    expect(await inboxRows()).toBe(before);
  });

  it('400 for a signed body that is not JSON; 413 over the ingest size limit', async () => {
    const before = await inboxRows();
    const bad = await pushGeneric(t, 'generic', connection.id, connection.secret, '{"readings": [');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.code).toBe('INVALID_REQUEST');
    const huge = await pushGeneric(t, 'generic', connection.id, connection.secret, {
      readings: [],
      padding: 'x'.repeat(70_000),
    });
    expect(huge.statusCode).toBe(413);
    expect(huge.json().error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(await inboxRows()).toBe(before);
  });

  it('404 for an unknown connection, a provider that does not match, an unknown provider, a deactivated connection', async () => {
    const other = await createConnection(t, acme.id, 'generic');
    for (const url of [
      `/ingest/v1/generic/00000000-0000-4000-8000-000000000000`,
      `/ingest/v1/motive/${connection.id}`,
      `/ingest/v1/tesla/${connection.id}`,
      '/ingest/v1/generic/nope',
    ]) {
      const response = await t.app.inject({
        method: 'POST',
        url,
        headers: { 'content-type': 'application/json' },
        payload: '{}',
      });
      expect(response.statusCode, url).toBe(404);
    }
    await t.admin('DELETE', `/provider-connections/${other.id}`);
    const response = await pushGeneric(t, 'generic', other.id, other.generated_secret!, { readings: [] });
    expect(response.statusCode).toBe(404);
  });

  it('400 for a push to Geotab, which is pulled, never pushed', async () => {
    const geotab = await createConnection(t, acme.id, 'geotab', {
      base_url: 'https://my.geotab.com',
      database: 'acme',
      username: 'u',
      password: 'p',
    });
    const response = await t.app.inject({
      method: 'POST',
      url: `/ingest/v1/geotab/${geotab.id}`,
      headers: { 'content-type': 'application/json' },
      payload: '{}',
    });
    expect(response.statusCode).toBe(400);
  });
});
