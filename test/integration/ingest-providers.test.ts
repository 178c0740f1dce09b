import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hmacHex } from '../../providers/signing.js';
import { projectRoot } from '../../src/paths.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createConnection, settle } from '../helpers/ingest.js';

let t: TestApp;
let acme: { id: string; key: string };

const fixture = (provider: string, file: string) =>
  readFileSync(join(projectRoot, 'test/fixtures/providers', provider, file), 'utf8');

beforeAll(async () => {
  t = await createTestApp({ WEBHOOK_ALLOW_NETS: '127.0.0.1/32' });
  acme = await t.createCompany();
  await t.startWorkers(['ingest', 'health']);
});
afterAll(() => t.close());

async function vehicleSignals(id: string) {
  return (await t.api('GET', `/vehicles/${id}`, acme.key)).json().data.signals;
}

describe('push verification per provider, end to end', () => {
  it('Samsara: v1 HMAC over v1:{timestamp}:{body} with the base64-decoded secret; stale timestamps refused', async () => {
    const secret = Buffer.from('samsara-webhook-secret').toString('base64');
    const connection = await createConnection(t, acme.id, 'samsara', { webhook_secret: secret });
    const truck = await t.createVehicle(acme.id, {
      provider_connection_id: connection.id,
      provider_vehicle_id: '281474977075805',
    });
    const body = fixture('samsara', 'snapshot.json');
    const send = (timestamp: number, key = Buffer.from(secret, 'base64')) =>
      t.app.inject({
        method: 'POST',
        url: `/ingest/v1/samsara/${connection.id}`,
        payload: body,
        headers: {
          'content-type': 'application/json',
          'x-samsara-timestamp': String(timestamp),
          'x-samsara-signature': `v1=${hmacHex('sha256', key, `v1:${timestamp}:${body}`)}`,
        },
      });
    const now = Math.floor(Date.now() / 1000);
    expect((await send(now - 400)).statusCode).toBe(401);
    expect((await send(now, Buffer.from('wrong'))).statusCode).toBe(401);
    expect((await send(now)).statusCode).toBe(202);
    await settle(t);
    expect(await vehicleSignals(truck.id)).toMatchObject({
      fuel_percent: 62,
      coolant_temp_c: 88,
      odometer: { km: 184_023.12, source: 'samsara' },
    });
  });

  it('Smartcar: verifies SC-Signature before anything, answers a signed VERIFY, accepts signed VEHICLE_STATE events', async () => {
    const token = 'smartcar-application-management-token';
    const connection = await createConnection(t, acme.id, 'smartcar', { webhook_secret: token });
    const car = await t.createVehicle(acme.id, {
      provider_connection_id: connection.id,
      provider_vehicle_id: '123e4567-e89b-12d3-a456-426614174000',
    });
    const send = (body: string, signature?: string) =>
      t.app.inject({
        method: 'POST',
        url: `/ingest/v1/smartcar/${connection.id}`,
        headers: { 'content-type': 'application/json', ...(signature ? { 'sc-signature': signature } : {}) },
        payload: body,
      });
    const verify = JSON.stringify({ eventId: 'v1', eventType: 'VERIFY', data: { challenge: 'abc123' } });
    // Unsigned, a VERIFY is refused like any push: nobody without the token gets an answer signed with it.
    expect((await send(verify)).statusCode).toBe(401);
    expect((await send(verify, hmacHex('sha256', 'not-the-token', verify))).statusCode).toBe(401);
    const answered = await send(verify, hmacHex('sha256', token, verify));
    expect(answered.statusCode).toBe(200);
    expect(answered.json()).toEqual({ challenge: hmacHex('sha256', token, 'abc123') });
    // Only token-like challenges are answered, even signed.
    const eventLike = JSON.stringify({
      eventType: 'VERIFY',
      data: { challenge: fixture('smartcar', 'webhook.vehicle_state.json') },
    });
    expect((await send(eventLike, hmacHex('sha256', token, eventLike))).statusCode).toBe(400);

    // A live delivery: the documented sample, delivered now.
    const body = fixture('smartcar', 'webhook.vehicle_state.json').replace('1746366013000', String(Date.now()));
    expect((await send(body)).statusCode).toBe(401);
    const signed = await send(body, hmacHex('sha256', token, body));
    expect(signed.statusCode).toBe(202);
    expect(signed.json().data.duplicate).toBe(false);
    await settle(t);
    expect((await vehicleSignals(car.id)).odometer).toMatchObject({ km: 48_211.3, source: 'smartcar' });
    const { rows } = await t.pool.query(`SELECT count(*)::int AS n FROM ingest_inbox WHERE connection_id = $1`, [
      connection.id,
    ]);
    expect(rows[0].n).toBe(1);
  });

  it('Motive: X-KT-Webhook-Signature is the hex HMAC-SHA1 of the body', async () => {
    const secret = 'd9d36bea41c44ae49d1bfc4a48ba2abe';
    const connection = await createConnection(t, acme.id, 'motive', { webhook_secret: secret });
    const truck = await t.createVehicle(acme.id, {
      provider_connection_id: connection.id,
      provider_vehicle_id: '41225',
    });
    const body = fixture('motive', 'vehicle_locations.json');
    const wrong = await t.app.inject({
      method: 'POST',
      url: `/ingest/v1/motive/${connection.id}`,
      payload: body,
      headers: { 'content-type': 'application/json', 'x-kt-webhook-signature': hmacHex('sha1', 'nope', body) },
    });
    expect(wrong.statusCode).toBe(401);
    const good = await t.app.inject({
      method: 'POST',
      url: `/ingest/v1/motive/${connection.id}`,
      payload: body,
      headers: { 'content-type': 'application/json', 'x-kt-webhook-signature': hmacHex('sha1', secret, body) },
    });
    expect(good.statusCode).toBe(202);
    await settle(t);
    const signals = await vehicleSignals(truck.id);
    expect(signals.fuel_percent).toBe(63.5);
    expect(signals.odometer.source).toBe('motive');
  });

  it('Traccar OsmAnd: GET with the device token in the URL; a wrong token is 401 and stores nothing', async () => {
    const connection = await createConnection(t, acme.id, 'traccar');
    expect(connection.ingest_url).toMatch(new RegExp(`/ingest/v1/traccar/${connection.id}/[A-Za-z0-9_-]{43}$`));
    const device = await t.createVehicle(acme.id, {
      provider_connection_id: connection.id,
      provider_vehicle_id: '358240051111110',
    });
    const path = new URL(connection.ingest_url!).pathname;
    const query =
      'id=358240051111110&timestamp=1746367331&lat=41.85003&lon=-87.65005&speed=29.2&bearing=87&fuelLevel=62&power=13.9';
    const refused = await t.app.inject({
      method: 'GET',
      url: `/ingest/v1/traccar/${connection.id}/wrong-token?${query}`,
    });
    expect(refused.statusCode).toBe(401);
    expect((await t.app.inject({ method: 'GET', url: `${path}?lat=1` })).statusCode).toBe(400);
    const accepted = await t.app.inject({ method: 'GET', url: `${path}?${query}` });
    expect(accepted.statusCode).toBe(202);
    const form = await t.app.inject({
      method: 'POST',
      url: path,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'id=358240051111110&timestamp=1746367391&fuelLevel=61',
    });
    expect(form.statusCode).toBe(202);
    await settle(t);
    const signals = await vehicleSignals(device.id);
    expect(signals).toMatchObject({
      fuel_percent: 61,
      battery_voltage: 13.9,
      speed_kph: 54.0784,
      location: { lat: 41.85003, lon: -87.65005, heading: 87 },
    });
    // The device token is shown once: listings give no ingest URL for Traccar.
    const listed = (await t.admin('GET', `/companies/${acme.id}/provider-connections`))
      .json()
      .data.find((c: { id: string }) => c.id === connection.id);
    expect(listed.ingest_url).toBeNull();
    expect(JSON.stringify(listed)).not.toContain(path.split('/').at(-1));
  });

  it('a pull-only connection (no webhook secret) accepts no pushes, however they are signed', async () => {
    const pullOnly = await createConnection(t, acme.id, 'samsara', {
      api_token: 'tok',
      base_url: 'http://127.0.0.1:9',
    });
    const body = fixture('samsara', 'snapshot.json');
    const timestamp = Math.floor(Date.now() / 1000);
    const response = await t.app.inject({
      method: 'POST',
      url: `/ingest/v1/samsara/${pullOnly.id}`,
      payload: body,
      headers: {
        'content-type': 'application/json',
        'x-samsara-timestamp': String(timestamp),
        'x-samsara-signature': `v1=${hmacHex('sha256', Buffer.alloc(0), `v1:${timestamp}:${body}`)}`,
      },
    });
    expect(response.statusCode).toBe(401);
  });

  it('an OsmAnd form with a NUL byte is refused at the door (400), not a 500 from Postgres', async () => {
    const connection = await createConnection(t, acme.id, 'traccar');
    const response = await t.app.inject({
      method: 'POST',
      url: new URL(connection.ingest_url!).pathname,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: Buffer.from('id=358240051111110&lat=41.85&lon=-87.65&note=a\u0000b'),
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.details.errors).toEqual([{ field: 'body', message: 'contains a NUL byte' }]);
  });

  it('an OsmAnd JSON push without device_id is refused at the door', async () => {
    const connection = await createConnection(t, acme.id, 'traccar');
    const response = await t.app.inject({
      method: 'POST',
      url: new URL(connection.ingest_url!).pathname,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ location: { coords: { latitude: 1, longitude: 2 } } }),
    });
    expect(response.statusCode).toBe(400);
  });

  it('keeps provider credentials encrypted at rest and never returns them', async () => {
    const connection = await createConnection(t, acme.id, 'geotab', {
      base_url: 'https://my.geotab.com',
      database: 'acme',
      username: 'api@acme.com',
      password: 'hunter2-geotab',
    });
    expect(connection.config_keys).toEqual(['base_url', 'database', 'password', 'username']);
    const { rows } = await t.pool.query(`SELECT config_ciphertext FROM provider_connections WHERE id = $1`, [
      connection.id,
    ]);
    expect(rows[0].config_ciphertext.includes(Buffer.from('hunter2-geotab'))).toBe(false);
    const detail = await t.admin('GET', `/provider-connections/${connection.id}`);
    expect(detail.body).not.toContain('hunter2-geotab');
    expect(detail.json().data.ingest_url).toBeNull();
  });

  it('validates connection config per provider', async () => {
    const bad: Array<[string, Record<string, string>, string]> = [
      ['geotab', { base_url: 'https://my.geotab.com' }, 'config.database'],
      ['smartcar', {}, 'config.webhook_secret'],
      ['samsara', {}, 'config'],
      ['traccar', { webhook_secret: 'chosen-by-me' }, 'config.webhook_secret'],
      ['motive', { api_token: 't', base_url: 'ftp://x' }, 'config.base_url'],
    ];
    for (const [provider, config, field] of bad) {
      const response = await t.admin('POST', `/companies/${acme.id}/provider-connections`, { provider, config });
      expect(response.statusCode, provider).toBe(400);
      expect(response.json().error.details.errors.map((e: { field: string }) => e.field)).toContain(field);
    }
  });

  it('refuses a pull base_url that is not https or points inside the network, and applies the default one', async () => {
    const refused: Array<[string, string]> = [
      ['http://api.samsara.com', 'must be https'],
      ['https://10.0.0.5', 'points at a private address'],
      ['https://169.254.169.254/latest', 'points at a metadata address'],
      ['https://[::ffff:192.168.1.1]', 'points at a ipv4_mapped:private address'],
      ['https://localhost:8443', 'points at a local host name'],
      ['https://user:pw@api.samsara.com', 'must not contain credentials'],
      ['not a url', 'is not a valid URL'],
    ];
    for (const [baseUrl, message] of refused) {
      const response = await t.admin('POST', `/companies/${acme.id}/provider-connections`, {
        provider: 'samsara',
        config: { api_token: 'tok', base_url: baseUrl },
      });
      expect(response.statusCode, baseUrl).toBe(400);
      expect(response.json().error.details.errors, baseUrl).toContainEqual({ field: 'config.base_url', message });
    }
    // Given no base_url, a connection with pull credentials gets the provider's own (https) API.
    const defaulted = await createConnection(t, acme.id, 'motive', { api_token: 'tok' });
    expect(defaulted.config_keys).toEqual(['api_token', 'base_url']);
    // http is allowed only inside WEBHOOK_ALLOW_NETS (127.0.0.1/32 in this file).
    expect(
      (await createConnection(t, acme.id, 'motive', { api_token: 'tok', base_url: 'http://127.0.0.1:9' })).id,
    ).toBeTruthy();
  });

  it('a vehicle can only use a connection of its own company, with the same provider', async () => {
    const other = await t.createCompany('Other');
    const foreign = await createConnection(t, other.id, 'generic');
    const refused = await t.admin('POST', `/companies/${acme.id}/vehicles`, {
      provider_connection_id: foreign.id,
      provider_vehicle_id: 'x',
    });
    expect(refused.statusCode).toBe(400);
    const mine = await createConnection(t, acme.id, 'generic');
    const mismatch = await t.admin('POST', `/companies/${acme.id}/vehicles`, {
      provider_connection_id: mine.id,
      telematics_provider: 'samsara',
    });
    expect(mismatch.statusCode).toBe(400);
    const ok = await t.admin('POST', `/companies/${acme.id}/vehicles`, {
      provider_connection_id: mine.id,
      provider_vehicle_id: 'x',
    });
    expect(ok.json().data).toMatchObject({ telematics_provider: 'generic', provider_connection_id: mine.id });
  });
});
