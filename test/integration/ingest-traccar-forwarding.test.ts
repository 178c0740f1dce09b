/**
 * A Traccar server configured as docs/providers/traccar.md says (`forward.type=json`,
 * `forward.url` and `event.forward.url` = the connection's ingest_url) feeding the product: the
 * exact bodies `PositionForwarderJson` and `EventForwarderJson` post, over real HTTP, then the
 * readings, events and vehicle state that result, read back through GET /api/v1/vehicles/:id.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/paths.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createConnection, readingCount, settle } from '../helpers/ingest.js';

let t: TestApp;
let base: string;
let acme: { id: string; key: string };

const truckImei = '352093081234567';
const vanImei = '868120303021987';

const fixture = (file: string) =>
  readFileSync(join(projectRoot, 'test/fixtures/providers/traccar', file), 'utf8').trim();

/** A fixture with literal text replaced, so the body keeps Jackson's formatting (181.0, "+00:00"). */
function variant(file: string, replacements: Array<[string, string]>): string {
  let body = fixture(file);
  for (const [from, to] of replacements) {
    if (!body.includes(from)) throw new Error(`${file} has no ${from}`);
    body = body.replaceAll(from, to);
  }
  return body;
}

/** A position of the truck at another time and place, without the fixture's alarm. */
const truckAt = (time: string, lat: string) =>
  variant('forward-position.json', [
    ['2026-11-20T10:15:30.000+00:00', time],
    ['"latitude":41.85003', `"latitude":${lat}`],
    ['"alarm":"hardBraking",', ''],
  ]);

beforeAll(async () => {
  t = await createTestApp();
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  acme = await t.createCompany();
  await t.startWorkers(['ingest', 'health']);
});
afterAll(() => t.close());

/** What a Traccar server does: one POST per position or event, JSON, to the configured URL. */
async function forward(path: string, body: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

async function signals(vehicleId: string) {
  const response = await fetch(`${base}/api/v1/vehicles/${vehicleId}`, {
    headers: { authorization: `Bearer ${acme.key}` },
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { data: { signals: Record<string, any> } }).data.signals;
}

/** A Traccar connection and one vehicle mapped to a device's uniqueId. */
async function connectDevice(uniqueId: string) {
  const connection = await createConnection(t, acme.id, 'traccar');
  const vehicle = await t.createVehicle(acme.id, {
    provider_connection_id: connection.id,
    provider_vehicle_id: uniqueId,
  });
  return {
    connection,
    vehicle,
    path: new URL(connection.ingest_url!).pathname,
    token: connection.generated_secret!,
  };
}

async function events(vehicleId: string) {
  const { rows } = await t.pool.query(
    `SELECT kind, recorded_at AS "recordedAt", source FROM vehicle_events WHERE vehicle_id = $1 ORDER BY recorded_at`,
    [vehicleId],
  );
  return rows;
}

async function locationTimes(vehicleId: string) {
  const { rows } = await t.pool.query(
    `SELECT recorded_at FROM readings WHERE vehicle_id = $1 AND signal = 'location' ORDER BY recorded_at`,
    [vehicleId],
  );
  return rows.map((r) => (r.recorded_at as Date).toISOString());
}

async function inboxRows(connectionId: string) {
  const { rows } = await t.pool.query(
    `SELECT processed_at IS NOT NULL AS processed, error, samples_count AS samples FROM ingest_inbox WHERE connection_id = $1 ORDER BY id`,
    [connectionId],
  );
  return rows;
}

describe('Traccar server forwarding, end to end', () => {
  it('a position and its alarm event: readings once, one hard_brake, the vehicle state from the position', async () => {
    const { vehicle, path, connection } = await connectDevice(truckImei);
    const position = await forward(path, fixture('forward-position.json'));
    expect(position.status).toBe(202);
    expect(position.body.data.duplicate).toBe(false);
    await settle(t);
    const stored = await readingCount(t, vehicle.id);
    expect(stored).toBe(20);

    const event = await forward(path, fixture('forward-event-alarm.json'));
    expect(event.status).toBe(202);
    await settle(t);
    expect(await readingCount(t, vehicle.id)).toBe(stored);
    expect(await events(vehicle.id)).toEqual([
      { kind: 'hard_brake', recordedAt: new Date('2026-11-20T10:15:30Z'), source: 'traccar' },
    ]);
    const { rows: daily } = await t.pool.query(
      `SELECT hard_brakes, speed_samples FROM driving_daily WHERE vehicle_id = $1 AND day = '2026-11-20'`,
      [vehicle.id],
    );
    expect(daily).toEqual([{ hard_brakes: 1, speed_samples: 1 }]);
    expect((await inboxRows(connection.id)).map((r) => [r.processed, r.error])).toEqual([
      [true, null],
      [true, null],
    ]);

    const at = '2026-11-20T10:15:30.000Z';
    const state = await signals(vehicle.id);
    expect(state).toMatchObject({
      location: { lat: 41.85003, lon: -87.65005, heading: 87, as_of: at },
      speed_kph: 54,
      odometer: { km: 184023.12, source: 'traccar', as_of: at },
      fuel_percent: 62,
      battery_voltage: 13.907,
      coolant_temp_c: 88,
      engine_state: 'on',
      engine_hours: 4012.5,
      dtcs: [{ code: 'P0420', system: 'powertrain', mil: false }],
      total_distance: 1523771.44,
    });
    expect(new Set(Object.values(state.observed_at))).toEqual(new Set([at]));
  });

  it('duplicates, late and out-of-order positions: stored once each, the newest fix stays the state', async () => {
    const { vehicle, path } = await connectDevice(truckImei);
    const a = fixture('forward-position.json');
    const b = truckAt('2026-11-20T10:16:30.000+00:00', '41.8555');
    const c = truckAt('2026-11-20T10:17:30.000+00:00', '41.8612');
    for (const body of [a, c, b]) expect((await forward(path, body)).status).toBe(202);
    await settle(t);
    const stored = await readingCount(t, vehicle.id);
    const state = await signals(vehicle.id);
    expect(state.location).toEqual({
      lat: 41.8612,
      lon: -87.65005,
      heading: 87,
      as_of: '2026-11-20T10:17:30.000Z',
    });
    expect(state.observed_at.fuel_percent).toBe('2026-11-20T10:17:30.000Z');
    // B came last but is older: kept as a reading, never the state.
    expect(await locationTimes(vehicle.id)).toEqual([
      '2026-11-20T10:15:30.000Z',
      '2026-11-20T10:16:30.000Z',
      '2026-11-20T10:17:30.000Z',
    ]);

    // Traccar's retry (or a device replaying its buffer) delivers A and B again, then once more.
    for (const body of [a, b, a]) expect((await forward(path, body)).status).toBe(202);
    await settle(t);
    expect(await readingCount(t, vehicle.id)).toBe(stored);
    expect(await events(vehicle.id)).toHaveLength(1);
    const { rows: daily } = await t.pool.query(
      `SELECT hard_brakes, speed_samples FROM driving_daily WHERE vehicle_id = $1`,
      [vehicle.id],
    );
    expect(daily).toEqual([{ hard_brakes: 1, speed_samples: 3 }]);
    expect((await signals(vehicle.id)).location.as_of).toBe('2026-11-20T10:17:30.000Z');
  });

  it('valid:false never moves the vehicle; its attributes do count; a "+0000" date reads like "+00:00"', async () => {
    const { vehicle, path } = await connectDevice(truckImei);
    expect((await forward(path, fixture('forward-position.json'))).status).toBe(202);
    expect((await forward(path, fixture('forward-position-invalid.json'))).status).toBe(202);
    await settle(t);
    const parked = await signals(vehicle.id);
    expect(parked.location).toMatchObject({ lat: 41.85003, lon: -87.65005, as_of: '2026-11-20T10:15:30.000Z' });
    expect(parked.observed_at.speed_kph).toBe('2026-11-20T10:15:30.000Z');
    expect(parked).toMatchObject({
      fuel_percent: 61,
      coolant_temp_c: 90,
      battery_voltage: 13.85,
      odometer: { km: 184031.9, as_of: '2026-11-20T10:25:30.000Z' },
    });
    expect(await locationTimes(vehicle.id)).toEqual(['2026-11-20T10:15:30.000Z']);

    // A Traccar from before 2021 writes the offset without a colon; the next valid fix moves the vehicle.
    expect((await forward(path, fixture('forward-position-legacy.json'))).status).toBe(202);
    await settle(t);
    const moved = await signals(vehicle.id);
    expect(moved.location).toEqual({ lat: 41.86342, lon: -87.63881, heading: 12, as_of: '2026-11-20T10:27:00.000Z' });
    expect(moved).toMatchObject({ speed_kph: 36, fuel_percent: 60 });
    expect(await locationTimes(vehicle.id)).toEqual(['2026-11-20T10:15:30.000Z', '2026-11-20T10:27:00.000Z']);
  });

  it('an outdated position (a GT06 status message) repeats the fix and updates the attributes at its device time', async () => {
    const { vehicle, path } = await connectDevice(vanImei);
    expect((await forward(path, fixture('forward-position-gt06.json'))).status).toBe(202);
    expect((await forward(path, fixture('forward-position-gt06-status.json'))).status).toBe(202);
    await settle(t);
    const state = await signals(vehicle.id);
    expect(state).toMatchObject({
      engine_state: 'off',
      location: { lat: 41.87811, lon: -87.62979, heading: 214, as_of: '2026-11-20T11:02:00.000Z' },
    });
    expect(state.observed_at.engine_state).toBe('2026-11-20T11:05:12.441Z');
    expect(await locationTimes(vehicle.id)).toEqual(['2026-11-20T11:02:00.000Z']);
  });

  it('an event without a position (deviceOnline) is accepted and writes nothing', async () => {
    const { vehicle, path, connection } = await connectDevice(truckImei);
    expect((await forward(path, fixture('forward-event-device-online.json'))).status).toBe(202);
    await settle(t);
    expect(await inboxRows(connection.id)).toEqual([{ processed: true, error: null, samples: 0 }]);
    expect(await readingCount(t, vehicle.id)).toBe(0);
  });

  it('refuses what can never be stored whole (400), and a wrong token (401): nothing is written', async () => {
    const { path, connection } = await connectDevice(truckImei);
    const refusals: Array<[string, string]> = [
      [
        variant('forward-position.json', [
          ['"fixTime":"2026-11-20T10:15:30.000+00:00"', '"fixTime":"2026-11-31T10:15:30.000+00:00"'],
        ]),
        'position.fixTime is not a date',
      ],
      [
        variant('forward-event-alarm.json', [
          ['"eventTime":"2026-11-20T10:15:30.000+00:00"', '"eventTime":"Fri Nov 20 10:15:30 UTC 2026"'],
        ]),
        'event.eventTime is not a date',
      ],
      [
        variant('forward-position.json', [[`"uniqueId":"${truckImei}"`, '"uniqueId":null']]),
        'device.uniqueId is required',
      ],
    ];
    for (const [body, message] of refusals) {
      const refused = await forward(path, body);
      expect(refused.status, message).toBe(400);
      expect(refused.body.error).toMatchObject({
        code: 'INVALID_REQUEST',
        details: { errors: [{ field: 'body', message }] },
      });
    }
    const wrong = await forward(`/ingest/v1/traccar/${connection.id}/not-the-token`, fixture('forward-position.json'));
    expect(wrong.status).toBe(401);
    expect(await inboxRows(connection.id)).toEqual([]);
  });

  it('takes the token as Authorization: Bearer on the URL without it (forward.header)', async () => {
    const { vehicle, token, connection } = await connectDevice(truckImei);
    const plain = `/ingest/v1/traccar/${connection.id}`;
    expect((await forward(plain, fixture('forward-position.json'))).status).toBe(401);
    expect((await forward(plain, fixture('forward-position.json'), { authorization: 'Bearer nope' })).status).toBe(401);
    expect(await inboxRows(connection.id)).toEqual([]);
    const accepted = await forward(plain, fixture('forward-position.json'), { authorization: `Bearer ${token}` });
    expect(accepted.status).toBe(202);
    await settle(t);
    expect((await signals(vehicle.id)).location.as_of).toBe('2026-11-20T10:15:30.000Z');
  });

  it('OsmAnd device pushes keep working on the same ingest URL', async () => {
    const { vehicle, path } = await connectDevice(truckImei);
    const device = await fetch(
      `${base}${path}?id=${truckImei}&timestamp=2026-11-20T10:40:00Z&lat=41.87&lon=-87.63&speed=10&fuelLevel=58`,
    );
    expect(device.status).toBe(202);
    expect((await forward(path, fixture('forward-position.json'))).status).toBe(202);
    await settle(t);
    expect(await signals(vehicle.id)).toMatchObject({
      location: { lat: 41.87, lon: -87.63, as_of: '2026-11-20T10:40:00.000Z' },
      fuel_percent: 58,
      coolant_temp_c: 88,
    });
  });
});
