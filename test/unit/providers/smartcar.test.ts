import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { hmacHex } from '../../../providers/signing.js';
import { isSmartcarVerify, smartcar, smartcarVerifyChallenge } from '../../../providers/smartcar.js';
import { pullSmartcarVehicle, smartcarClient } from '../../../providers/smartcar.client.js';
import { startFakeProvider, type FakeAnswer, type FakeProvider } from '../../helpers/fake-provider.js';
import { ok, rows } from '../../helpers/normalized.js';
import { pullContext } from '../../helpers/pull-context.js';

const receivedAt = new Date('2026-05-04T14:05:00Z');
const fixture = (name: string) =>
  readFileSync(new URL(`../../fixtures/providers/smartcar/${name}`, import.meta.url), 'utf8');
const normalize = (body: unknown) =>
  smartcar.normalize(
    { contentType: 'application/json', body: typeof body === 'string' ? body : JSON.stringify(body) },
    receivedAt,
  );

function push(body: string, signature?: string) {
  return {
    method: 'POST',
    headers: signature === undefined ? {} : { 'sc-signature': signature },
    pathToken: null,
    rawBody: Buffer.from(body),
  };
}

const metricVehicle = '123e4567-e89b-12d3-a456-426614174000';

describe('smartcar adapter: v4 webhooks', () => {
  it('maps the documented VEHICLE_STATE sample at oemUpdatedAt (epoch ms)', () => {
    const result = ok(normalize(fixture('webhook.vehicle_state.json')));
    expect(rows(result)).toEqual([
      { vehicle: metricVehicle, signal: 'odometer_km', at: '2025-05-04T13:35:12.000Z', value: 48211.3 },
    ]);
    expect(result.events).toEqual([]);
    expect(result.skipped).toEqual([]);
  });

  it('maps miles, location, the 12 V state of charge (not volts) and skips ERROR, bodiless and untimed signals', () => {
    const result = ok(normalize(fixture('webhook.vehicle_state.full.json')));
    expect(rows(result)).toEqual([
      // 30120.5 miles × 1.609344
      { vehicle: 'veh-imperial-1', signal: 'odometer_km', at: '2026-05-04T14:00:00.000Z', value: 48474.245952 },
      // no oemUpdatedAt: retrievedAt
      {
        vehicle: 'veh-imperial-1',
        signal: 'location',
        at: '2026-05-04T14:04:00.000Z',
        value: { lat: 51.5014, lon: -0.1419, heading: 45.3 },
      },
      { vehicle: 'veh-imperial-1', signal: 'low_voltage_battery_percent', at: '2026-05-04T13:58:20.000Z', value: 95 },
      {
        vehicle: 'veh-imperial-1',
        signal: 'low_voltage_battery_status',
        at: '2026-05-04T13:58:20.000Z',
        value: 'WARN',
      },
      // the EV traction battery, never the 12 V system voltage
      { vehicle: 'veh-imperial-1', signal: 'ev_battery_percent', at: '2026-05-04T14:04:00.000Z', value: 75 },
    ]);
    expect(result.samples.some((s) => s.signal === 'battery_voltage')).toBe(false);
    expect(result.skipped.map((s) => s.reason)).toEqual([
      'signal closure-isdoorlocked status ERROR (VEHICLE_NOT_CAPABLE)',
      'signal odometer-traveleddistance has no body',
      'location has no valid time',
    ]);
  });

  it('skips odometer units it does not know and out-of-range states of charge', () => {
    const event = (signals: unknown[]) => ({ eventType: 'VEHICLE_STATE', data: { vehicle: { id: 'v9' }, signals } });
    const meta = { oemUpdatedAt: 1777903200000 };
    const result = ok(
      normalize(
        event([
          {
            code: 'odometer-traveleddistance',
            body: { unit: 'furlongs', value: 3 },
            status: { value: 'SUCCESS' },
            meta,
          },
          { code: 'odometer-traveleddistance', body: { value: 3 }, status: { value: 'SUCCESS' }, meta },
          {
            code: 'lowvoltagebattery-stateofcharge',
            body: { unit: 'percent', value: 12.6 },
            status: { value: 'SUCCESS' },
            meta,
          },
          {
            code: 'lowvoltagebattery-stateofcharge',
            body: { unit: 'percent', value: 140 },
            status: { value: 'SUCCESS' },
            meta,
          },
          { code: 'lowvoltagebattery-status', body: { value: 'MELTED' }, status: { value: 'SUCCESS' }, meta },
          'nope',
        ]),
      ),
    );
    expect(rows(result)).toEqual([
      { vehicle: 'v9', signal: 'low_voltage_battery_percent', at: '2026-05-04T14:00:00.000Z', value: 12.6 },
    ]);
    expect(result.skipped.map((s) => s.reason)).toEqual([
      'signal odometer-traveleddistance unit furlongs unknown',
      'signal odometer-traveleddistance unit undefined unknown',
      'low_voltage_battery_percent 140 out of range',
      'low_voltage_battery_status MELTED unknown',
      'signal is not an object',
    ]);
  });

  it('maps fuel, oil life, speed, the EV battery, tires, the DTC list, the MIL and system statuses', () => {
    const result = ok(normalize(fixture('webhook.vehicle_state.signals.json')));
    const at = (ms: number) => new Date(ms).toISOString();
    expect(rows(result)).toEqual([
      { vehicle: metricVehicle, signal: 'fuel_percent', at: at(1777903200000), value: 75 },
      { vehicle: metricVehicle, signal: 'oil_life_percent', at: at(1777903200000), value: 85 },
      // 40 mph
      { vehicle: metricVehicle, signal: 'speed_kph', at: at(1777903210000), value: 64.37376 },
      { vehicle: metricVehicle, signal: 'ev_battery_percent', at: at(1777903440000), value: 64 },
      {
        vehicle: metricVehicle,
        signal: 'tire_pressure_kpa',
        at: at(1777903100000),
        value: { front_left: 241.3, front_right: 240, rear_left: 236.5, rear_right: 238 },
      },
      {
        vehicle: metricVehicle,
        signal: 'dtcs',
        at: at(1777903000000),
        value: [
          { code: 'P0300', system: 'powertrain', mil: false },
          { code: 'C0035', system: 'chassis', mil: false },
        ],
      },
      { vehicle: metricVehicle, signal: 'check_engine_light', at: at(1777903000000), value: true },
      { vehicle: metricVehicle, signal: 'system_status_abs', at: at(1777903000000), value: 'ALERT' },
      { vehicle: metricVehicle, signal: 'system_status_airbag', at: at(1777903000000), value: 'OK' },
    ]);
    expect(result.skipped.map((s) => s.reason)).toEqual(['system_status_transmission BROKEN unknown']);
  });

  it('reads a tire layout without counts from the highest row and column, and psi when the body says so', () => {
    const signal = {
      code: 'wheel-tires',
      body: {
        unit: 'psi',
        values: [
          { row: 0, column: 0, tirePressure: 35 },
          { row: 2, column: 1, tirePressure: 80 },
        ],
      },
      status: { value: 'SUCCESS' },
      meta: { retrievedAt: 1777903440000 },
    };
    const event = { eventType: 'VEHICLE_STATE', data: { vehicle: { id: 'v' }, signals: [signal] } };
    expect(rows(ok(normalize(event)))[0]?.value).toEqual({
      front_left: 241.316495,
      front_right: null,
      rear_left: null,
      rear_right: 551.58056,
    });
  });

  it('normalizes a VERIFY event to nothing and other event types to one skip', () => {
    expect(normalize(fixture('webhook.verify.json'))).toEqual({ ok: true, samples: [], events: [], skipped: [] });
    expect(normalize({ eventId: 'e3', eventType: 'VEHICLE_ERROR', data: {} })).toEqual({
      ok: true,
      samples: [],
      events: [],
      skipped: [{ reason: 'event type VEHICLE_ERROR carries no vehicle state' }],
    });
  });

  it('rejects bodies that are not JSON or not a known shape, without throwing', () => {
    expect(normalize('{"eventType":')).toEqual({ ok: false, reason: 'body is not JSON' });
    expect(normalize([])).toEqual({ ok: false, reason: 'expected a Smartcar webhook event or batch wrapper' });
    expect(normalize({ responses: [] })).toEqual({
      ok: false,
      reason: 'expected a Smartcar webhook event or batch wrapper',
    });
    expect(normalize({ eventType: 'VEHICLE_STATE', data: { signals: [] } })).toEqual({
      ok: false,
      reason: 'VEHICLE_STATE without data.vehicle.id',
    });
    expect(normalize({ eventType: 'VEHICLE_STATE', data: { vehicle: { id: 'v' } } })).toEqual({
      ok: false,
      reason: 'VEHICLE_STATE without data.signals',
    });
    expect(normalize({ smartcar_vehicle_id: 'v', response: { error: 'x' } })).toEqual({
      ok: false,
      reason: 'batch response without responses',
    });
    expect(normalize({ response: { responses: [] }, smartcar_vehicle_id: null })).toEqual({
      ok: false,
      reason: 'smartcar_vehicle_id is missing',
    });
  });
});

describe('smartcar adapter: v2 batch wrapper', () => {
  it('maps every requested path in metric units at SC-Data-Age, else the receive time', () => {
    const result = ok(
      normalize(
        `{"smartcar_vehicle_id":"${metricVehicle}","unit_system":"metric","response":${fixture('batch.metric.json')}}`,
      ),
    );
    expect(rows(result)).toEqual([
      { vehicle: metricVehicle, signal: 'odometer_km', at: '2026-05-04T13:40:12.000Z', value: 37829.4 },
      // percentRemaining 0.62 is a fraction
      { vehicle: metricVehicle, signal: 'fuel_percent', at: '2026-05-04T13:40:12.000Z', value: 62 },
      {
        vehicle: metricVehicle,
        signal: 'tire_pressure_kpa',
        at: '2026-05-04T11:02:00.000Z',
        value: { front_left: 241.3, front_right: 240, rear_left: null, rear_right: 236.5 },
      },
      // lifeRemaining 0.415 is a fraction
      { vehicle: metricVehicle, signal: 'oil_life_percent', at: '2026-05-03T18:00:00.000Z', value: 41.5 },
      // no sc-data-age: receivedAt
      {
        vehicle: metricVehicle,
        signal: 'location',
        at: '2026-05-04T14:05:00.000Z',
        value: { lat: 37.4292, lon: -122.1381, heading: null },
      },
      // the EV traction battery: percentRemaining 0.8 is a fraction
      { vehicle: metricVehicle, signal: 'ev_battery_percent', at: '2026-05-04T13:40:12.000Z', value: 80 },
      { vehicle: metricVehicle, signal: 'system_status_abs', at: '2026-05-04T13:35:00.000Z', value: 'ALERT' },
      { vehicle: metricVehicle, signal: 'system_status_airbag', at: '2026-05-04T13:35:00.000Z', value: 'OK' },
      { vehicle: metricVehicle, signal: 'system_status_transmission', at: '2026-05-04T13:35:00.000Z', value: 'OK' },
      {
        vehicle: metricVehicle,
        signal: 'dtcs',
        at: '2026-05-04T13:30:00.000Z',
        value: [
          { code: 'P302D', system: 'powertrain', mil: false },
          { code: 'U0100', system: 'network', mil: false },
        ],
      },
    ]);
    expect(result.skipped).toEqual([]);
    expect(result.events).toEqual([]);
  });

  it('converts imperial miles and psi, skips non-200 entries, bad times and out-of-range values with reasons', () => {
    const result = ok(normalize(fixture('batch.imperial.wrapper.json')));
    const at = '2026-05-04T12:00:00.000Z';
    expect(rows(result)).toEqual([
      // no sc-unit-system on the entry: the wrapper's imperial → 23456.7 mi × 1.609344; header name in any case
      { vehicle: 'veh-imperial-1', signal: 'odometer_km', at, value: 37749.899405 },
      // psi × 6.894757 (UNCONFIRMED unit); "low" is not a number and is dropped
      {
        vehicle: 'veh-imperial-1',
        signal: 'tire_pressure_kpa',
        at,
        value: { front_left: 241.316495, front_right: 251.658631, rear_left: null, rear_right: null },
      },
      { vehicle: 'veh-imperial-1', signal: 'fuel_percent', at, value: 57 },
      // /battery is the EV traction battery: its own signal, never battery_voltage
      { vehicle: 'veh-imperial-1', signal: 'ev_battery_percent', at, value: 80 },
    ]);
    expect(result.skipped.map((s) => s.reason)).toEqual([
      '/engine/oil returned 409 VEHICLE_NOT_CAPABLE',
      'dtcs has no valid time',
      'fuel_percent 140 out of range',
    ]);
  });

  it('clears dtcs with an empty list and skips unknown unit systems', () => {
    const wrapper = {
      smartcar_vehicle_id: 'v1',
      unit_system: 'nautical',
      response: {
        responses: [
          {
            path: '/diagnostics/dtcs',
            code: 200,
            body: { activeCodes: [] },
            headers: { 'sc-data-age': '2026-05-04T10:00:00Z' },
          },
          { path: '/odometer', code: 200, body: { distance: 5 }, headers: { 'sc-data-age': '2026-05-04T10:00:00Z' } },
          { path: '/tires/pressure', code: 200, body: { frontLeft: 30 }, headers: {} },
          { path: '/fuel', code: 500, body: null },
          null,
        ],
      },
    };
    const result = ok(normalize(wrapper));
    expect(rows(result)).toEqual([{ vehicle: 'v1', signal: 'dtcs', at: '2026-05-04T10:00:00.000Z', value: [] }]);
    expect(result.skipped.map((s) => s.reason)).toEqual([
      '/odometer unit system nautical unknown',
      '/tires/pressure unit system nautical unknown',
      '/fuel returned 500',
      'batch entry is not an object',
    ]);
  });

  it('supports refresh', () => {
    expect(smartcar.refresh).toBe('supported');
  });
});

describe('smartcar adapter: signatures and VERIFY', () => {
  /** Just after the fixture's meta.deliveredAt (2025-05-04T13:40:13Z). */
  const delivered = new Date('2025-05-04T13:41:00Z');

  it('passes a vector computed from the documented scheme: SC-Signature = hex HMAC-SHA256(AMT, raw body)', () => {
    const body = '{"eventId":"e1","eventType":"Ping"}';
    const signature = '6b13eb867fdfbce855c0e480b60c6386514923e45a20c2d26cfa799b90ab8f8b';
    expect(smartcar.push!.verify(push(body, signature), 'amt-test-token', receivedAt)).toEqual({ ok: true });
    expect(smartcar.push!.verify(push(body, signature.toUpperCase()), 'amt-test-token', receivedAt)).toEqual({
      ok: true,
    });
  });

  it('rejects a tampered body, a wrong token, a malformed or missing signature', () => {
    const body = fixture('webhook.vehicle_state.json');
    const good = hmacHex('sha256', 'amt-test-token', body);
    expect(smartcar.push!.verify(push(body, good), 'amt-test-token', delivered)).toEqual({ ok: true });
    expect(smartcar.push!.verify(push(body.replace('48211.3', '18211.3'), good), 'amt-test-token', receivedAt)).toEqual(
      {
        ok: false,
        reason: 'bad_signature',
      },
    );
    // Re-serialized JSON is not the raw body (the SDK helper's mistake, smartcar/node-sdk `verifyPayload`).
    expect(smartcar.push!.verify(push(JSON.stringify(JSON.parse(body)), good), 'amt-test-token', receivedAt)).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
    expect(smartcar.push!.verify(push(body, good), 'other-token', receivedAt)).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
    expect(smartcar.push!.verify(push(body, good.slice(0, 40)), 'amt-test-token', receivedAt)).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
    expect(smartcar.push!.verify(push(body, hmacHex('sha256', '', body)), '', receivedAt)).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
    expect(smartcar.push!.verify(push(body), 'amt-test-token', receivedAt)).toEqual({
      ok: false,
      reason: 'missing_signature',
    });
  });

  it('refuses a signed delivery older than the replay window or from the future, as stale', () => {
    const body = fixture('webhook.vehicle_state.json');
    const good = hmacHex('sha256', 'amt-test-token', body);
    const verifyAt = (iso: string) => smartcar.push!.verify(push(body, good), 'amt-test-token', new Date(iso));
    expect(verifyAt('2025-05-05T13:40:00Z')).toEqual({ ok: true });
    expect(verifyAt('2025-05-05T13:41:00Z')).toEqual({ ok: false, reason: 'stale_timestamp' });
    expect(verifyAt('2025-05-04T13:35:14Z')).toEqual({ ok: true });
    expect(verifyAt('2025-05-04T13:35:12Z')).toEqual({ ok: false, reason: 'stale_timestamp' });
    // Only a body whose signature matched is read: a forged deliveredAt is a bad signature first.
    const forged = body.replace('1746366013000', String(Date.now()));
    expect(smartcar.push!.verify(push(forged, good), 'amt-test-token', new Date())).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
  });

  it('answers a verified VERIFY through the handshake, refusing a challenge that is not a token', () => {
    const handshake = smartcar.push!.handshake!;
    const verify = fixture('webhook.verify.json');
    expect(handshake(push(verify), 'amt-test-token')).toEqual({
      ok: true,
      answer: { challenge: 'dfacbe2c06e34599069a6f8248ee79b5a50385d8de8a3da12c82da084f27aaf9' },
    });
    expect(handshake(push(fixture('webhook.vehicle_state.json')), 'amt-test-token')).toBeNull();
    const eventLike = JSON.stringify({
      eventType: 'VERIFY',
      data: { challenge: fixture('webhook.vehicle_state.json') },
    });
    expect(handshake(push(eventLike), 'amt-test-token')).toEqual({
      ok: false,
      field: 'data.challenge',
      message: 'is not a challenge token',
    });
  });

  it('keys replays by eventId (Smartcar retries an event with the same one), else by the body', () => {
    const replayKey = smartcar.push!.replayKey!;
    const body = fixture('webhook.vehicle_state.json');
    expect(replayKey(push(body))).toBe('event:5a537912-9ad3-424b-ba33-65a1704567e9');
    // A retry is a new delivery (new deliveryId and deliveredAt) of the same event.
    expect(replayKey(push(body.replace('48b25f8f', '00000000')))).toBe(replayKey(push(body)));
    expect(replayKey(push('{"eventType":"VEHICLE_STATE"}'))).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('answers the VERIFY challenge with hex HMAC-SHA256(AMT, challenge)', () => {
    const body = fixture('webhook.verify.json');
    const challenge = '3a1b5c3e-8c9d-4f2a-b6e7-0d1c2b3a4f5e';
    expect(isSmartcarVerify(JSON.parse(body))).toBe(challenge);
    expect(isSmartcarVerify(body)).toBe(challenge);
    expect(isSmartcarVerify(Buffer.from(body))).toBe(challenge);
    expect(smartcarVerifyChallenge(challenge, 'amt-test-token')).toEqual({
      challenge: 'dfacbe2c06e34599069a6f8248ee79b5a50385d8de8a3da12c82da084f27aaf9',
    });
    expect(isSmartcarVerify(JSON.parse(fixture('webhook.vehicle_state.json')))).toBeNull();
    expect(isSmartcarVerify({ eventType: 'VERIFY', data: {} })).toBeNull();
    expect(isSmartcarVerify({ eventType: 'VERIFY', data: { challenge: 42 } })).toBeNull();
    expect(isSmartcarVerify('{not json')).toBeNull();
    expect(isSmartcarVerify(null)).toBeNull();
  });
});

const apis: FakeProvider[] = [];
afterEach(async () => {
  await Promise.all(apis.splice(0).map((api) => api.close()));
});

/** A fake Smartcar API on 127.0.0.1 that answers every request with `answer` and logs it with its body. */
async function fakeSmartcar(answer: () => FakeAnswer) {
  const api = await startFakeProvider(answer);
  apis.push(api);
  return api;
}

function json(status: number, body: string, headers: Record<string, string> = {}): FakeAnswer {
  return { status, body, headers: { 'content-type': 'application/json', ...headers } };
}

describe('smartcar client', () => {
  it('has no feed: Smartcar pushes', () => {
    expect(smartcarClient.pullFeed).toBeUndefined();
  });

  it('POSTs one metric batch with the bearer token and stores the wrapper the adapter reads', async () => {
    const batch = fixture('batch.metric.json');
    const api = await fakeSmartcar(() => json(200, batch, { 'sc-request-id': 'r1' }));
    const outcome = await smartcarClient.pullVehicle!(
      { base_url: `${api.url}/`, api_token: 'sc-access-token' },
      metricVehicle,
      pullContext(),
    );

    expect(api.requests).toHaveLength(1);
    const request = api.requests[0]!;
    expect([request.method, request.path]).toEqual(['POST', `/v2.0/vehicles/${metricVehicle}/batch`]);
    expect(request.headers.authorization).toBe('Bearer sc-access-token');
    expect(request.headers['sc-unit-system']).toBe('metric');
    expect(request.headers['content-type']).toBe('application/json');
    expect(JSON.parse(request.body)).toEqual({
      requests: [
        { path: '/odometer' },
        { path: '/fuel' },
        { path: '/battery' },
        { path: '/tires/pressure' },
        { path: '/engine/oil' },
        { path: '/location' },
        { path: '/diagnostics/dtcs' },
        { path: '/diagnostics/system_status' },
      ],
    });

    if (!outcome.ok) throw new Error('pull failed');
    expect(outcome.page.nextCursor).toBeNull();
    expect(outcome.page.hasMore).toBe(false);
    expect(outcome.page.contentType).toBe('application/json');
    expect(JSON.parse(outcome.page.body)).toEqual({
      smartcar_vehicle_id: metricVehicle,
      unit_system: 'metric',
      response: JSON.parse(batch),
    });
    const samples = rows(
      smartcar.normalize({ contentType: outcome.page.contentType, body: outcome.page.body }, receivedAt),
    );
    expect(samples.map((s) => [s.signal, s.at])).toEqual([
      ['odometer_km', '2026-05-04T13:40:12.000Z'],
      ['fuel_percent', '2026-05-04T13:40:12.000Z'],
      ['tire_pressure_kpa', '2026-05-04T11:02:00.000Z'],
      ['oil_life_percent', '2026-05-03T18:00:00.000Z'],
      ['location', '2026-05-04T14:05:00.000Z'],
      ['ev_battery_percent', '2026-05-04T13:40:12.000Z'],
      ['system_status_abs', '2026-05-04T13:35:00.000Z'],
      ['system_status_airbag', '2026-05-04T13:35:00.000Z'],
      ['system_status_transmission', '2026-05-04T13:35:00.000Z'],
      ['dtcs', '2026-05-04T13:30:00.000Z'],
    ]);
    expect(samples[1]?.value).toBe(62);
  });

  it('reports 429 with Retry-After as rate_limited, 5xx and non-JSON bodies as failed', async () => {
    let reply = json(429, '{"type":"RATE_LIMIT","code":"VEHICLE","description":"too many requests for this vehicle"}', {
      'retry-after': '2.5',
    });
    const api = await fakeSmartcar(() => reply);
    const config = { base_url: api.url, api_token: 't' };
    expect(await pullSmartcarVehicle(config, 'v1', pullContext())).toEqual({
      ok: false,
      kind: 'rate_limited',
      retryAfterMs: 2500,
    });
    reply = json(502, '{"type":"UPSTREAM","code":"UNKNOWN_ISSUE"}');
    expect(await pullSmartcarVehicle(config, 'v1', pullContext())).toEqual({
      ok: false,
      kind: 'failed',
      message: `HTTP 502 from ${new URL(api.url).host}: {"type":"UPSTREAM","code":"UNKNOWN_ISSUE"}`,
    });
    reply = json(200, 'not json');
    expect(await pullSmartcarVehicle(config, 'v1', pullContext())).toEqual({
      ok: false,
      kind: 'failed',
      message: 'smartcar batch returned a body that is not JSON',
    });
    expect(await pullSmartcarVehicle({ base_url: api.url }, 'v1', pullContext())).toEqual({
      ok: false,
      kind: 'failed',
      message: 'smartcar connection needs base_url and api_token',
    });
    expect(api.requests).toHaveLength(3);
  });
});
