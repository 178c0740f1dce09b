import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { samsara } from '../../../providers/samsara.js';
import { samsaraClient } from '../../../providers/samsara.client.js';
import { hmacHex } from '../../../providers/signing.js';
import type { NormalizeResult } from '../../../providers/types.js';
import { startFakeProvider, type FakeProvider } from '../../helpers/fake-provider.js';
import { ok } from '../../helpers/normalized.js';
import { pullContext } from '../../helpers/pull-context.js';

const receivedAt = new Date('2026-05-04T14:15:00Z');
const fixture = (name: string) =>
  readFileSync(new URL(`../../fixtures/providers/samsara/${name}`, import.meta.url), 'utf8');
const normalize = (body: unknown) =>
  samsara.normalize(
    { contentType: 'application/json', body: typeof body === 'string' ? body : JSON.stringify(body) },
    receivedAt,
  );

/** Samples as [vehicle, signal, time, value] in output order. */
const rows = (result: NormalizeResult) =>
  ok(result).samples.map((s) => [s.providerVehicleId, s.signal, s.recordedAt.toISOString(), s.value]);
const reasons = (result: NormalizeResult) => ok(result).skipped.map((s) => s.reason);
const kph = (mph: number) => mph * 1.609344; // the adapter's mph → km/h conversion
const truck = '281474977075805';

describe('samsara normalize: vehicle stats', () => {
  it('maps the documented snapshot (singular {time, value} keys), each stat at its own time', () => {
    const result = normalize(fixture('snapshot.json'));
    expect(rows(result)).toEqual([
      [truck, 'odometer_km', '2026-05-04T14:02:11.000Z', 184023.117], // 184023117 m
      [truck, 'fuel_percent', '2026-05-04T14:01:57.000Z', 62],
      [truck, 'coolant_temp_c', '2026-05-04T14:02:03.000Z', 88], // 88000 milli-°C
    ]);
    expect(ok(result).events).toEqual([]);
    expect(ok(result).skipped).toEqual([]);
    // The snapshot's endCursor is "": no cursor.
    expect(ok(result).nextCursor).toBeUndefined();
  });

  it('maps the documented feed (plural array keys): gps location and speed at the point time, endCursor as cursor', () => {
    const result = normalize(fixture('feed.json'));
    expect(rows(result)).toEqual([
      [
        truck,
        'location',
        '2026-05-04T14:03:00.000Z',
        // The provider's own reverse geocoding is kept (instant verification's address).
        { lat: 37.7929, lon: -122.4177, heading: 90, address: 'Hyde Street, San Francisco, CA' },
      ],
      [truck, 'speed_kph', '2026-05-04T14:03:00.000Z', kph(31.5)],
      [truck, 'engine_state', '2026-05-04T13:58:40.000Z', 'idle'],
      [truck, 'battery_voltage', '2026-05-04T14:02:30.000Z', 13.9], // 13900 mV
    ]);
    expect(kph(31.5)).toBeCloseTo(50.694336, 9);
    expect(ok(result).nextCursor).toBe('aGlqa2xtbm9w');
    expect(ok(result).skipped).toEqual([]);
  });

  it('maps every documented stat of a full snapshot and ignores unknown keys', () => {
    const result = normalize(fixture('snapshot-full.json'));
    expect(rows(result)).toEqual([
      [truck, 'odometer_km', '2026-05-04T14:02:11.000Z', 184023.117],
      [truck, 'gps_odometer_km', '2026-05-04T14:02:12.000Z', 183990.5], // 183990500 m, GPS-derived series
      [truck, 'fuel_percent', '2026-05-04T14:01:57.000Z', 62],
      [truck, 'battery_voltage', '2026-05-04T14:02:30.000Z', 13.9],
      [truck, 'coolant_temp_c', '2026-05-04T14:02:03.000Z', 88],
      [truck, 'engine_state', '2026-05-04T13:58:40.000Z', 'on'],
      [truck, 'speed_kph', '2026-05-04T14:02:40.000Z', kph(55)], // ecuSpeedMph
      [truck, 'engine_hours', '2026-05-04T14:02:00.000Z', 4012.5], // 14445000 s
      [truck, 'location', '2026-05-04T14:03:00.000Z', { lat: 37.7929, lon: -122.4177, heading: 10 }], // 370° wraps
      [truck, 'speed_kph', '2026-05-04T14:03:00.000Z', 0],
      [
        truck,
        'dtcs',
        '2026-05-04T13:59:00.000Z',
        [
          { code: 'SPN3031-FMI9', system: 'j1939', mil: false },
          { code: 'SPN110-FMI0', system: 'j1939', mil: true },
          { code: '1234-5', system: 'unknown', mil: false },
        ],
      ],
      [truck, 'check_engine_light', '2026-05-04T13:59:00.000Z', true], // j1939 warningIsOn
      [
        truck,
        'tire_pressure_kpa',
        '2026-05-04T14:00:00.000Z',
        { front_left: 758, front_right: 760, rear_left: 700, rear_right: null },
      ],
    ]);
    expect(ok(result).skipped).toEqual([]);
  });

  it('handles out-of-order arrays, nulls, bad values, unknown stats and entries without an id', () => {
    const result = normalize(fixture('feed-mixed.json'));
    expect(rows(result)).toEqual([
      [truck, 'odometer_km', '2026-05-04T14:05:00.000Z', 184025],
      [truck, 'odometer_km', '2026-05-04T14:01:00.000Z', 184021.5],
      [truck, 'fuel_percent', '2026-05-04T14:04:00.000Z', 61],
      [truck, 'engine_state', '2026-05-04T14:06:00.000Z', 'off'],
      [truck, 'engine_state', '2026-05-04T13:50:00.000Z', 'on'],
      [truck, 'location', '2026-05-04T14:04:30.000Z', { lat: 37.8, lon: -122.42, heading: 180 }],
      [truck, 'speed_kph', '2026-05-04T14:04:30.000Z', kph(10)],
      // ECU 2024 has milStatus 1; ECU 2025 has none and falls back to checkEngineLightIsOn; P0420 once.
      [
        truck,
        'dtcs',
        '2026-05-04T14:02:00.000Z',
        [
          { code: 'P0420', system: 'powertrain', mil: true },
          { code: 'U0100', system: 'network', mil: true },
        ],
      ],
      [truck, 'check_engine_light', '2026-05-04T14:02:00.000Z', true],
      [truck, 'dtcs', '2026-05-04T14:05:00.000Z', []],
      [truck, 'check_engine_light', '2026-05-04T14:05:00.000Z', false],
      [
        truck,
        'tire_pressure_kpa',
        '2026-05-04T14:00:00.000Z',
        { front_left: 758, front_right: null, rear_left: null, rear_right: 702 },
      ],
    ]);
    expect(reasons(result)).toEqual([
      'odometer_km is empty',
      'fuel_percent 140 out of range',
      'fuel_percent has no valid time',
      'engine_state Running unknown',
      'location 0,0 is no fix',
      'batteryMilliVolts is empty',
      'vehicle without id',
      'data entry is not an object',
    ]);
    expect(ok(result).nextCursor).toBe('b3BxcnN0');
  });

  it('reads MIL per J1939 code and the light from any J1939 lamp, and tire pressure from decorations', () => {
    const result = normalize({
      data: [
        {
          id: 77,
          faultCodes: [
            {
              time: '2026-05-04T14:00:00Z',
              j1939: {
                checkEngineLights: { emissionsIsOn: false, protectIsOn: false, stopIsOn: false, warningIsOn: false },
                diagnosticTroubleCodes: [
                  { spnId: 94, fmiId: 1, milStatus: 0 },
                  { spnId: 'x', fmiId: 1 },
                ],
              },
            },
          ],
          gps: [
            {
              time: '2026-05-04T14:01:00Z',
              latitude: 41.85,
              longitude: -87.65,
              decorations: { tirePressure: { frontRightTirePressureKPa: 800 } },
            },
          ],
        },
      ],
    });
    expect(rows(result)).toEqual([
      ['77', 'dtcs', '2026-05-04T14:00:00.000Z', [{ code: 'SPN94-FMI1', system: 'j1939', mil: false }]],
      ['77', 'check_engine_light', '2026-05-04T14:00:00.000Z', false],
      ['77', 'location', '2026-05-04T14:01:00.000Z', { lat: 41.85, lon: -87.65, heading: null }],
      [
        '77',
        'tire_pressure_kpa',
        '2026-05-04T14:01:00.000Z',
        { front_left: null, front_right: 800, rear_left: null, rear_right: null },
      ],
    ]);
    expect(ok(result).skipped).toEqual([]);
  });

  it('rejects payloads that are not JSON or not a documented shape, without throwing', () => {
    expect(normalize('{"data": [')).toEqual({ ok: false, reason: 'body is not JSON' });
    expect(normalize([])).toEqual({ ok: false, reason: 'expected {"data": [...]} or a webhook event' });
    expect(normalize({ vehicles: [] })).toEqual({ ok: false, reason: 'expected {"data": [...]} or a webhook event' });
    expect(normalize({ data: [], pagination: { endCursor: 'abc', hasNextPage: false } })).toEqual({
      ok: true,
      samples: [],
      events: [],
      skipped: [],
      nextCursor: 'abc',
    });
  });
});

describe('samsara normalize: safety events and webhooks', () => {
  it('maps safety event behavior labels to provider events with the peak g', () => {
    const result = normalize(fixture('safety-events.json'));
    expect(ok(result).samples).toEqual([]);
    expect(ok(result).events).toEqual([
      { providerVehicleId: truck, kind: 'hard_brake', recordedAt: new Date('2026-05-04T14:10:05Z'), g: 0.46 },
      { providerVehicleId: '281474977075806', kind: 'impact', recordedAt: new Date('2026-05-04T14:12:00Z'), g: 2.7 },
      {
        providerVehicleId: '281474977075806',
        kind: 'hard_corner',
        recordedAt: new Date('2026-05-04T14:12:00Z'),
        g: 2.7,
      },
      { providerVehicleId: truck, kind: 'hard_accel', recordedAt: new Date('2026-05-04T14:01:00Z'), g: null },
    ]);
    expect(reasons(result)).toEqual(['safety event without vehicle or time']);
  });

  it('maps an EngineFaultOn webhook to a dtcs sample at eventTime', () => {
    const result = normalize(fixture('webhook-engine-fault-on.json'));
    expect(rows(result)).toEqual([
      [
        truck,
        'dtcs',
        '2026-05-04T14:07:12.000Z',
        [
          { code: 'SPN3031-FMI9', system: 'j1939', mil: true },
          { code: 'P0420', system: 'powertrain', mil: false },
        ],
      ],
    ]);
    expect(ok(result).skipped).toEqual([]);
  });

  it('maps an EngineFaultOff webhook to an empty dtcs list (the fault cleared)', () => {
    expect(rows(normalize(fixture('webhook-engine-fault-off.json')))).toEqual([
      [truck, 'dtcs', '2026-05-04T15:30:00.000Z', []],
    ]);
  });

  it('skips webhooks without telematics or without a vehicle or code', () => {
    const ping = normalize('{"eventId":"e1","eventType":"Ping"}');
    expect(ping).toEqual({
      ok: true,
      samples: [],
      events: [],
      skipped: [{ reason: 'webhook event Ping carries no telematics' }],
    });
    expect(
      reasons(
        normalize({
          eventId: 'e2',
          eventType: 'GeofenceEntry',
          eventTime: '2026-05-04T14:00:00Z',
          data: { vehicle: { id: '1' } },
        }),
      ),
    ).toEqual(['webhook event GeofenceEntry carries no telematics']);
    expect(
      reasons(
        normalize({
          eventId: 'e3',
          eventType: 'EngineFaultOn',
          eventTime: '2026-05-04T14:00:00Z',
          data: { fault: { j1939: { spnId: 1, fmiId: 2 } } },
        }),
      ),
    ).toEqual(['EngineFaultOn without vehicle id']);
    expect(
      reasons(
        normalize({
          eventId: 'e4',
          eventType: 'EngineFaultOn',
          eventTime: '2026-05-04T14:00:00Z',
          data: { vehicle: { id: '1' }, fault: {} },
        }),
      ),
    ).toEqual(['EngineFaultOn without a fault code']);
    expect(reasons(normalize({ eventId: 'e5', eventType: 'EngineFaultOff', data: { vehicle: { id: '1' } } }))).toEqual([
      'dtcs has no valid time',
    ]);
  });
});

describe('samsara verifyPush', () => {
  // A vector computed from Samsara's documented scheme (docs/providers/samsara.md).
  const secret = 'c2VjcmV0LWtleQ==';
  const timestamp = '1700000000';
  const body = '{"eventId":"e1","eventType":"Ping"}';
  const signature = 'v1=11c2b588a44a5c26472285238b475bcd709971ac8a477745d55b9b254e678c7a';
  const at = (seconds: number) => new Date(seconds * 1000);
  const push = (rawBody: string, headers: Record<string, string>) => ({
    method: 'POST',
    headers,
    pathToken: null,
    rawBody: Buffer.from(rawBody),
  });
  const verify = (rawBody: string, headers: Record<string, string>, key = secret, now = at(1700000000)) =>
    samsara.push!.verify(push(rawBody, headers), key, now);
  const signed = { 'x-samsara-timestamp': timestamp, 'x-samsara-signature': signature };

  it('accepts the documented vector (key = base64-decoded secret, over v1:<ts>:<body>)', () => {
    expect(verify(body, signed)).toEqual({ ok: true });
    expect(verify(body, { ...signed, 'x-samsara-signature': signature.toUpperCase().replace('V1=', 'v1=') })).toEqual({
      ok: true,
    });
    expect(`v1=${hmacHex('sha256', Buffer.from('secret-key'), `v1:${timestamp}:${body}`)}`).toBe(signature);
  });

  it('rejects a tampered body, a wrong secret, an undecoded secret and a re-used signature on another timestamp', () => {
    expect(verify(`${body} `, signed)).toEqual({ ok: false, reason: 'bad_signature' });
    expect(verify(body, signed, Buffer.from('other-key').toString('base64'))).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
    const withRawKey = `v1=${hmacHex('sha256', secret, `v1:${timestamp}:${body}`)}`;
    expect(verify(body, { ...signed, 'x-samsara-signature': withRawKey })).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
    expect(verify(body, { ...signed, 'x-samsara-timestamp': '1700000001' })).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
  });

  it('rejects malformed signature and timestamp headers', () => {
    expect(verify(body, { ...signed, 'x-samsara-signature': signature.slice(3) })).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
    expect(verify(body, { ...signed, 'x-samsara-signature': signature.replace('v1=', 'v2=') })).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
    expect(verify(body, { ...signed, 'x-samsara-timestamp': '2023-11-14T22:13:20Z' })).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
  });

  it('rejects stale and future timestamps beyond 300 s, accepts up to 300 s', () => {
    expect(verify(body, signed, secret, at(1700000300))).toEqual({ ok: true });
    expect(verify(body, signed, secret, at(1699999700))).toEqual({ ok: true });
    expect(verify(body, signed, secret, at(1700000301))).toEqual({ ok: false, reason: 'stale_timestamp' });
    expect(verify(body, signed, secret, at(1699999699))).toEqual({ ok: false, reason: 'stale_timestamp' });
  });

  it('reports missing headers', () => {
    expect(verify(body, {})).toEqual({ ok: false, reason: 'missing_signature' });
    expect(verify(body, { 'x-samsara-timestamp': timestamp })).toEqual({ ok: false, reason: 'missing_signature' });
    expect(verify(body, { 'x-samsara-signature': signature })).toEqual({ ok: false, reason: 'missing_signature' });
    expect(verify(body, { ...signed, 'x-samsara-signature': '' })).toEqual({ ok: false, reason: 'missing_signature' });
  });

  it('declares refresh support', () => {
    expect(samsara.id).toBe('samsara');
    expect(samsara.refresh).toBe('supported');
  });
});

describe('samsara normalize: the engine feed', () => {
  it('maps coolant, J1939 faults with their lights and engine seconds, each at its own time', () => {
    const result = normalize(fixture('feed-engine.json'));
    expect(rows(result)).toEqual([
      [truck, 'coolant_temp_c', '2026-05-04T14:03:10.000Z', 91.5],
      [
        truck,
        'dtcs',
        '2026-05-04T14:03:20.000Z',
        [
          { code: 'SPN523-FMI9', system: 'j1939', mil: false },
          { code: 'SPN1234-FMI4', system: 'j1939', mil: true },
        ],
      ],
      [truck, 'check_engine_light', '2026-05-04T14:03:20.000Z', true],
      [truck, 'engine_hours', '2026-05-04T14:03:30.000Z', 6001],
    ]);
    expect(ok(result).nextCursor).toBe('ZW5naW5lLTE=');
  });

  it('declares its push rules: JSON bodies, a replay key per body', () => {
    const rules = samsara.push!;
    expect(rules.tokenInPath).toBe(false);
    expect(rules.bodyProblem('{"eventId":"e1"}', 'application/json')).toBeNull();
    expect(rules.bodyProblem('{"eventId":', 'application/json')).toBe('body is not valid JSON');
    const request = (body: string) => ({ method: 'POST', headers: {}, pathToken: null, rawBody: Buffer.from(body) });
    expect(rules.replayKey!(request('{"a":1}'))).toBe(rules.replayKey!(request('{"a":1}')));
    expect(rules.replayKey!(request('{"a":1}'))).not.toBe(rules.replayKey!(request('{"a":2}')));
  });
});

describe('samsara client against a fake API on 127.0.0.1', () => {
  let api: FakeProvider;
  let baseUrl: string;

  beforeAll(async () => {
    api = await startFakeProvider(() => ({ status: 500, body: 'no reply queued' }));
    baseUrl = api.url;
  });
  afterAll(async () => {
    await api.close();
  });
  beforeEach(() => {
    api.reset();
  });

  const now = new Date('2026-05-04T15:00:00Z');
  const context = () => pullContext(now);
  const config = () => ({ base_url: baseUrl, api_token: 'samsara-token' });
  const distance = 'obdOdometerMeters,gpsOdometerMeters,fuelPercents';
  const rotation = (cursor: string | null) => JSON.parse(cursor!);

  it('pulls the distance feed from the start: 3 types, bearer token, endCursor and hasNextPage', async () => {
    const body = fixture('feed-mixed.json');
    api.queue({ status: 200, body });
    const outcome = await samsaraClient.pullFeed!(config(), null, context());
    expect(outcome).toEqual({
      ok: true,
      page: {
        body,
        contentType: 'application/json',
        nextCursor: JSON.stringify({ feed: 0, cursors: { distance: 'b3BxcnN0' } }),
        hasMore: true,
      },
    });
    expect(api.requests).toHaveLength(1);
    expect(api.requests[0]!.method).toBe('GET');
    expect(api.requests[0]!.url).toBe(`/fleet/vehicles/stats/feed?types=${distance}`);
    expect(api.requests[0]!.headers.authorization).toBe('Bearer samsara-token');
  });

  it('continues a plain cursor stored before the other feeds existed as the distance feed, then moves on', async () => {
    const body = fixture('feed.json');
    api.queue({ status: 200, body });
    const outcome = await samsaraClient.pullFeed!({ ...config(), base_url: `${baseUrl}/` }, 'aGlq/+=', context());
    expect(outcome).toEqual({
      ok: true,
      page: {
        body,
        contentType: 'application/json',
        nextCursor: JSON.stringify({ feed: 1, cursors: { distance: 'aGlqa2xtbm9w' } }),
        hasMore: true,
      },
    });
    expect(api.requests[0]!.url).toBe(`/fleet/vehicles/stats/feed?types=${distance}&after=aGlq%2F%2B%3D`);
    const query = new URL(api.requests[0]!.url, baseUrl).searchParams;
    expect(query.get('after')).toBe('aGlq/+=');
  });

  it('takes turns over every stat type the rules use and the safety events, each feed with its own cursor', async () => {
    api.on('GET /fleet/vehicles/stats/feed', (request) => {
      const types = request.query.get('types');
      const after = request.query.get('after');
      if (types === distance)
        return { body: { data: [], pagination: { endCursor: `d${after ?? ''}1`, hasNextPage: false } } };
      if (types === 'gps,engineStates,batteryMilliVolts') return { body: fixture('feed.json') };
      return { body: fixture('feed-engine.json') };
    });
    api.on('GET /fleet/safety-events', (request) =>
      request.query.get('after') === null
        ? { body: { data: [], pagination: { endCursor: 'page2', hasNextPage: true } } }
        : { body: fixture('safety-events.json') },
    );
    let cursor: string | null = null;
    const pages: boolean[] = [];
    for (let i = 0; i < 5; i++) {
      const outcome = await samsaraClient.pullFeed!(config(), cursor, context());
      if (!outcome.ok) throw new Error(JSON.stringify(outcome));
      cursor = outcome.page.nextCursor;
      pages.push(outcome.page.hasMore);
    }
    // distance, motion, engine, safety (a second page is ready), safety again: the round is over.
    expect(pages).toEqual([true, true, true, true, false]);
    const asked = api.requests.map((r) => [r.path, r.query.get('types'), r.query.get('after')]);
    expect(asked).toEqual([
      ['/fleet/vehicles/stats/feed', distance, null],
      ['/fleet/vehicles/stats/feed', 'gps,engineStates,batteryMilliVolts', null],
      ['/fleet/vehicles/stats/feed', 'engineCoolantTemperatureMilliC,faultCodes,obdEngineSeconds', null],
      ['/fleet/safety-events', null, null],
      ['/fleet/safety-events', null, 'page2'],
    ]);
    // The first safety window looks back an hour; its second page keeps the same window.
    for (const request of api.requests.slice(3)) {
      expect(request.query.get('startTime')).toBe('2026-05-04T14:00:00.000Z');
      expect(request.query.get('endTime')).toBe('2026-05-04T15:00:00.000Z');
    }
    expect(rotation(cursor)).toEqual({
      feed: 0,
      cursors: {
        distance: 'd1',
        motion: 'aGlqa2xtbm9w',
        engine: 'ZW5naW5lLTE=',
        safety: { since: '2026-05-04T14:00:00.000Z', until: '2026-05-04T15:00:00.000Z', page: null },
      },
    });

    // The next round continues every feed where it stopped; the next safety window overlaps the last by 10 minutes.
    api.reset();
    const later = new Date('2026-05-04T15:01:00Z');
    for (let i = 0; i < 4; i++) {
      const outcome = await samsaraClient.pullFeed!(config(), cursor, pullContext(later));
      if (!outcome.ok) throw new Error(JSON.stringify(outcome));
      cursor = outcome.page.nextCursor;
    }
    expect(api.requests.map((r) => r.query.get('after'))).toEqual(['d1', 'aGlqa2xtbm9w', 'ZW5naW5lLTE=', null]);
    expect(api.requests[3]!.query.get('startTime')).toBe('2026-05-04T14:50:00.000Z');
    expect(api.requests[3]!.query.get('endTime')).toBe('2026-05-04T15:01:00.000Z');
  });

  it('keeps the cursor it was given when a page has no endCursor', async () => {
    api.queue({ status: 200, body: '{"data":[],"pagination":{"endCursor":"","hasNextPage":false}}' });
    const outcome = await samsaraClient.pullFeed!(config(), 'c1', context());
    expect(outcome).toMatchObject({ ok: true, page: { hasMore: true } });
    if (outcome.ok) expect(rotation(outcome.page.nextCursor).cursors).toEqual({ distance: 'c1' });
  });

  it('reports 429 with a fractional Retry-After as rate limited', async () => {
    api.queue({ status: 429, body: '{"message":"rate limited"}', headers: { 'retry-after': '0.25' } });
    expect(await samsaraClient.pullFeed!(config(), 'c1', context())).toEqual({
      ok: false,
      kind: 'rate_limited',
      retryAfterMs: 250,
    });
    api.queue({ status: 429, body: '{}' });
    expect(await samsaraClient.pullFeed!(config(), 'c1', context())).toEqual({
      ok: false,
      kind: 'rate_limited',
      retryAfterMs: 60_000,
    });
  });

  it('reports 5xx, a non-JSON body and a missing token as failed', async () => {
    api.queue({ status: 503, body: 'upstream down' });
    const down = await samsaraClient.pullFeed!(config(), null, context());
    expect(down).toEqual({
      ok: false,
      kind: 'failed',
      message: `HTTP 503 from ${new URL(baseUrl).host}: upstream down`,
    });
    api.queue({ status: 200, body: '<html>' });
    expect(await samsaraClient.pullFeed!(config(), null, context())).toEqual({
      ok: false,
      kind: 'failed',
      message: 'samsara response is not {"data": [...]}',
    });
    expect(api.requests).toHaveLength(2);
    expect(await samsaraClient.pullFeed!({ base_url: baseUrl }, null, context())).toEqual({
      ok: false,
      kind: 'failed',
      message: 'samsara connection has no api_token',
    });
    expect(api.requests).toHaveLength(2);
  });

  it('pulls one vehicle from the snapshot endpoint, one request per stat group, stored as one page', async () => {
    api.queue(
      { status: 200, body: fixture('snapshot.json') },
      { status: 200, body: fixture('snapshot-motion.json') },
      { status: 200, body: fixture('snapshot-engine.json') },
    );
    const outcome = await samsaraClient.pullVehicle!(config(), truck, context());
    if (!outcome.ok) throw new Error(JSON.stringify(outcome));
    expect(outcome.page).toMatchObject({ contentType: 'application/json', nextCursor: null, hasMore: false });
    expect(api.requests.map((r) => r.url)).toEqual([
      `/fleet/vehicles/stats?types=${distance}&vehicleIds=${truck}`,
      `/fleet/vehicles/stats?types=gps,engineStates,batteryMilliVolts&vehicleIds=${truck}`,
      `/fleet/vehicles/stats?types=engineCoolantTemperatureMilliC,faultCodes,obdEngineSeconds&vehicleIds=${truck}`,
    ]);
    expect(api.requests.every((r) => r.headers.authorization === 'Bearer samsara-token')).toBe(true);
    const signals = new Set(ok(normalize(outcome.page.body)).samples.map((s) => s.signal));
    expect([...signals].sort()).toEqual([
      'battery_voltage',
      'check_engine_light',
      'coolant_temp_c',
      'dtcs',
      'engine_hours',
      'engine_state',
      'fuel_percent',
      'location',
      'odometer_km',
      'speed_kph',
    ]);
  });
});
