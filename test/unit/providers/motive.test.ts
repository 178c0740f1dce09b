import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { motive } from '../../../providers/motive.js';
import { motiveClient, pullMotiveFeed, pullMotiveVehicle } from '../../../providers/motive.client.js';
import { hmacHex } from '../../../providers/signing.js';
import {
  startFakeProvider,
  type FakeAnswer,
  type FakeProvider,
  type FakeRequest,
} from '../../helpers/fake-provider.js';
import { ok, rows } from '../../helpers/normalized.js';
import { pullContext } from '../../helpers/pull-context.js';

const receivedAt = new Date('2026-05-04T14:05:00Z');
const fixture = (name: string) =>
  readFileSync(new URL(`../../fixtures/providers/motive/${name}`, import.meta.url), 'utf8');
const normalize = (body: unknown) =>
  motive.normalize(
    { contentType: 'application/json', body: typeof body === 'string' ? body : JSON.stringify(body) },
    receivedAt,
  );

function push(body: string, signature?: string) {
  return {
    method: 'POST',
    headers: signature === undefined ? {} : { 'x-kt-webhook-signature': signature },
    pathToken: null,
    rawBody: Buffer.from(body),
  };
}

describe('motive adapter: normalize', () => {
  it('maps the documented vehicle_locations sample: true_odometer in miles and mph converted to km and km/h', () => {
    const result = ok(normalize(fixture('vehicle_locations.json')));
    const at = '2026-05-04T14:02:00.000Z';
    expect(rows(result)).toEqual([
      // true_odometer 412340.1 mi wins over the virtual odometer 412345.6 mi; ×1.609344.
      { vehicle: '41225', signal: 'odometer_km', at, value: 663597.065894 },
      { vehicle: '41225', signal: 'fuel_percent', at, value: 63.5 },
      { vehicle: '41225', signal: 'battery_voltage', at, value: 13.8 },
      // 54 mph
      { vehicle: '41225', signal: 'speed_kph', at, value: 86.904576 },
      // values.ts wraps the heading as ((h % 360) + 360) % 360, which adds float noise to fractional headings.
      {
        vehicle: '41225',
        signal: 'location',
        at,
        value: { lat: 41.85, lon: -87.65, heading: 12.9, address: 'Chicago, IL' },
      },
    ]);
    expect(result.events).toEqual([]);
    expect(result.skipped).toEqual([]);
    expect(result.nextCursor).toBeNull();
  });

  it('handles metric vehicles, missing/null/unknown fields, out-of-order entries and reports what it skipped', () => {
    const result = ok(normalize(fixture('vehicle_locations.mixed.json')));
    expect(rows(result)).toEqual([
      // metric_units true: km and km/h as they are; true_odometer null → odometer; true_engine_hours wins.
      { vehicle: '41226', signal: 'odometer_km', at: '2026-05-04T14:03:30.000Z', value: 98765.4 },
      { vehicle: '41226', signal: 'engine_hours', at: '2026-05-04T14:03:30.000Z', value: 5120.4 },
      { vehicle: '41226', signal: 'speed_kph', at: '2026-05-04T14:03:30.000Z', value: 88.5 },
      {
        vehicle: '41226',
        signal: 'location',
        at: '2026-05-04T14:03:30.000Z',
        value: { lat: 50.1109, lon: 8.6821, heading: 10, address: 'Frankfurt, DE' },
      },
      // no metric_units: Motive's default, miles (23456.7 mi) and mph (61.2 mph); an older located_at stays as given.
      { vehicle: '41227', signal: 'odometer_km', at: '2026-05-04T13:10:00.000Z', value: 37749.899405 },
      { vehicle: '41227', signal: 'speed_kph', at: '2026-05-04T13:10:00.000Z', value: 98.491853 },
    ]);
    expect(result.skipped.map((s) => s.reason)).toEqual([
      'fuel_percent 140 out of range',
      'battery_voltage is not a number',
      'location 0,0 is no fix',
      'vehicle 41228 has no current_location',
      'vehicle 41229 location without a valid located_at',
      'vehicles entry without vehicle',
      'vehicle without id',
    ]);
    // page_no 1 × per_page 100 < total 150: page 2 is next.
    expect(result.nextCursor).toBe('2');
  });

  it('maps a single {vehicle} with an offset located_at, preferring true_engine_hours', () => {
    const at = '2026-05-04T07:15:00.000Z';
    expect(rows(normalize(fixture('vehicle_single.json')))).toEqual([
      { vehicle: '51001', signal: 'odometer_km', at, value: 150010.8 },
      { vehicle: '51001', signal: 'engine_hours', at, value: 4299.9 },
      { vehicle: '51001', signal: 'fuel_percent', at, value: 12 },
      { vehicle: '51001', signal: 'battery_voltage', at, value: 27.6 },
      { vehicle: '51001', signal: 'speed_kph', at, value: 0 },
      { vehicle: '51001', signal: 'location', at, value: { lat: 52.52, lon: 13.405, heading: 270 } },
    ]);
  });

  it('maps the v3 history wrapper stored by the client (response shape UNCONFIRMED, read defensively)', () => {
    const result = ok(normalize(`{"motive_vehicle_id":"41225","response":${fixture('v3_vehicle_locations.json')}}`));
    expect(rows(result)).toEqual([
      { vehicle: '41225', signal: 'odometer_km', at: '2026-05-04T10:00:00.000Z', value: 663524.48448 },
      { vehicle: '41225', signal: 'engine_hours', at: '2026-05-04T10:00:00.000Z', value: 6000.5 },
      { vehicle: '41225', signal: 'fuel_percent', at: '2026-05-04T10:00:00.000Z', value: 70 },
      { vehicle: '41225', signal: 'battery_voltage', at: '2026-05-04T10:00:00.000Z', value: 13.9 },
      { vehicle: '41225', signal: 'speed_kph', at: '2026-05-04T10:00:00.000Z', value: 48.28032 },
      {
        vehicle: '41225',
        signal: 'location',
        at: '2026-05-04T10:00:00.000Z',
        value: { lat: 41.8, lon: -87.6, heading: 90 },
      },
      // a bare (unwrapped) record; true_odometer null → odometer 412250.5 mi
      { vehicle: '41225', signal: 'odometer_km', at: '2026-05-03T22:00:00.000Z', value: 663452.868672 },
      { vehicle: '41225', signal: 'battery_voltage', at: '2026-05-03T22:00:00.000Z', value: 12.6 },
      {
        vehicle: '41225',
        signal: 'location',
        at: '2026-05-03T22:00:00.000Z',
        value: { lat: 41.7, lon: -87.5, heading: null },
      },
    ]);
    expect(result.skipped).toEqual([{ reason: 'vehicle 41225 location without a valid located_at' }]);

    // metric_units on the record, a plain array, and a {vehicle} response; the wrapper's id always wins.
    expect(
      rows(
        normalize({
          motive_vehicle_id: 7,
          response: [{ located_at: '2026-05-04T01:00:00Z', true_odometer: 100, speed: 50, metric_units: true }],
        }),
      ),
    ).toEqual([
      { vehicle: '7', signal: 'odometer_km', at: '2026-05-04T01:00:00.000Z', value: 100 },
      { vehicle: '7', signal: 'speed_kph', at: '2026-05-04T01:00:00.000Z', value: 50 },
    ]);
    expect(
      rows(
        normalize({
          motive_vehicle_id: '7',
          response: { vehicle: { id: 999, current_location: { located_at: '2026-05-04T01:00:00Z', odometer: 10 } } },
        }),
      ),
    ).toEqual([{ vehicle: '7', signal: 'odometer_km', at: '2026-05-04T01:00:00.000Z', value: 16.09344 }]);
    expect(normalize({ motive_vehicle_id: '', response: [] })).toEqual({
      ok: false,
      reason: 'motive_vehicle_id is missing',
    });
    expect(normalize({ motive_vehicle_id: '7', response: { error: 'x' } })).toEqual({
      ok: false,
      reason: 'v3 response has no vehicle_locations list',
    });
  });

  it('maps vehicle_location_updated webhooks, nested and flat (assumed shapes)', () => {
    const at = '2026-05-04T14:04:00.000Z';
    expect(rows(normalize(fixture('webhook.vehicle_location_updated.json')))).toEqual([
      { vehicle: '41225', signal: 'odometer_km', at, value: 663598.514304 },
      { vehicle: '41225', signal: 'fuel_percent', at, value: 63 },
      { vehicle: '41225', signal: 'battery_voltage', at, value: 14.1 },
      { vehicle: '41225', signal: 'speed_kph', at, value: 0 },
      { vehicle: '41225', signal: 'location', at, value: { lat: 41.86, lon: -87.64, heading: 15 } },
    ]);
    const flat = '2026-05-04T07:20:00.000Z';
    expect(rows(normalize(fixture('webhook.vehicle_location_updated.flat.json')))).toEqual([
      { vehicle: '51001', signal: 'odometer_km', at: flat, value: 150020 },
      { vehicle: '51001', signal: 'speed_kph', at: flat, value: 42.5 },
      { vehicle: '51001', signal: 'location', at: flat, value: { lat: 52.53, lon: 13.41, heading: 270 } },
    ]);
    expect(ok(normalize({ action: 'vehicle_location_updated', lat: 1, lon: 2 })).skipped).toEqual([
      { reason: 'vehicle_location_updated without vehicle id' },
    ]);
  });

  it('turns an opened fault into a dtcs sample and skips a closed one with a reason', () => {
    expect(rows(normalize(fixture('webhook.fault_code_opened.json')))).toEqual([
      {
        vehicle: '41225',
        signal: 'dtcs',
        at: '2026-05-04T12:30:00.000Z',
        value: [{ code: 'P0420', system: 'powertrain', mil: false }],
      },
    ]);
    // J1939: SPN 110 with FMI 0; last_observed_at null → first_observed_at.
    expect(rows(normalize(fixture('webhook.fault_code_opened.j1939.json')))).toEqual([
      {
        vehicle: '41226',
        signal: 'dtcs',
        at: '2026-05-04T13:00:00.000Z',
        value: [{ code: 'SPN110-FMI0', system: 'j1939', mil: false }],
      },
    ]);
    const closed = ok(normalize(fixture('webhook.fault_code_closed.json')));
    expect(closed.samples).toEqual([]);
    expect(closed.skipped).toEqual([
      { reason: 'fault P0420 of vehicle 41225 closed: a closed fault does not list the codes still active' },
    ]);
    expect(ok(normalize({ action: 'fault_code_opened', fault_code: { code: 'P0300' } })).skipped).toEqual([
      { reason: 'fault_code_opened without vehicle id or code' },
    ]);
  });

  it('turns driver performance events into provider events (crash → impact)', () => {
    const webhook = ok(normalize(fixture('webhook.driver_performance_event.json')));
    expect(webhook.samples).toEqual([]);
    expect(webhook.events).toEqual([
      { providerVehicleId: '41225', kind: 'impact', recordedAt: new Date('2026-05-04T14:01:07Z'), g: null },
    ]);

    const list = ok(normalize(fixture('driver_performance_events.json')));
    expect(list.events).toEqual([
      { providerVehicleId: '41225', kind: 'hard_brake', recordedAt: new Date('2026-05-04T08:00:00Z'), g: null },
      { providerVehicleId: '41226', kind: 'hard_accel', recordedAt: new Date('2026-05-04T08:05:00Z'), g: null },
      { providerVehicleId: '41227', kind: 'hard_corner', recordedAt: new Date('2026-05-04T08:10:00Z'), g: null },
    ]);
    expect(list.skipped.map((s) => s.reason)).toEqual([
      'driver_performance_event seat_belt_violation not mapped',
      'driver_performance_event hard_brake without a valid start_time',
      'driver_performance_event hard_brake without vehicle id',
    ]);
    expect(ok(normalize({ action: 'engine_toggle_event' }))).toEqual({
      ok: true,
      samples: [],
      events: [],
      skipped: [{ reason: 'webhook action engine_toggle_event not handled' }],
    });
  });

  it('rejects bodies that are not JSON or not a known shape, without throwing', () => {
    expect(normalize('{"vehicles": [')).toEqual({ ok: false, reason: 'body is not JSON' });
    expect(normalize(['fault_code_closed'])).toEqual({
      ok: false,
      reason: 'expected a Motive vehicle_locations list, vehicle or webhook object',
    });
    expect(normalize({ data: [] })).toEqual({
      ok: false,
      reason: 'expected a Motive vehicle_locations list, vehicle or webhook object',
    });
    expect(normalize('null')).toEqual({
      ok: false,
      reason: 'expected a Motive vehicle_locations list, vehicle or webhook object',
    });
    expect(ok(normalize({ vehicles: ['x', 1, null] })).skipped).toHaveLength(3);
  });

  it('supports refresh', () => {
    expect(motive.refresh).toBe('supported');
  });
});

describe('motive adapter: verifyPush', () => {
  it('passes the docs vector: X-KT-Webhook-Signature = hex HMAC-SHA1(secret, raw body)', () => {
    const body = '["fault_code_closed"]';
    const secret = 'd9d36bea41c44ae49d1bfc4a48ba2abe';
    const signature = 'f04a8386a21a6cba0447024e83b3f0983352bb72';
    expect(hmacHex('sha1', secret, body)).toBe(signature);
    expect(motive.push!.verify(push(body, signature), secret, receivedAt)).toEqual({ ok: true });
    expect(motive.push!.verify(push(body, ` ${signature.toUpperCase()} `), secret, receivedAt)).toEqual({ ok: true });
  });

  it('rejects a tampered body, a wrong secret, a malformed or missing signature', () => {
    const body = fixture('webhook.fault_code_opened.json');
    const secret = 'shared-secret';
    const good = hmacHex('sha1', secret, body);
    expect(motive.push!.verify(push(body, good), secret, receivedAt)).toEqual({ ok: true });
    expect(
      motive.push!.verify(push(body.replace('P0420', 'P0421').replace('p0420', 'p0421'), good), secret, receivedAt),
    ).toEqual({ ok: false, reason: 'bad_signature' });
    expect(motive.push!.verify(push(body, good), 'other-secret', receivedAt)).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
    expect(motive.push!.verify(push(body, hmacHex('sha256', secret, body)), secret, receivedAt)).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
    expect(motive.push!.verify(push(body, `sha1=${good}`), secret, receivedAt)).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
    expect(motive.push!.verify(push(body, hmacHex('sha1', '', body)), '', receivedAt)).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
    expect(motive.push!.verify(push(body), secret, receivedAt)).toEqual({ ok: false, reason: 'missing_signature' });
    expect(motive.push!.verify(push(body, ''), secret, receivedAt)).toEqual({ ok: false, reason: 'missing_signature' });
  });
});

/** A fake Motive API on 127.0.0.1 that answers every request with `answer` and logs it. */
async function fakeMotive(answer: (request: FakeRequest) => FakeAnswer) {
  const api = await startFakeProvider(answer);
  apis.push(api);
  return api;
}

const apis: FakeProvider[] = [];
afterEach(async () => {
  await Promise.all(apis.splice(0).map((api) => api.close()));
});

function json(status: number, body: string, headers: Record<string, string> = {}): FakeAnswer {
  return { status, body, headers: { 'content-type': 'application/json; charset=utf-8', ...headers } };
}

/** A logged request's query as a plain object. */
const query = (request: FakeRequest | undefined) =>
  request === undefined ? undefined : Object.fromEntries(request.query);

describe('motive normalize: the fault code list', () => {
  it('gives each vehicle one dtcs sample of its open codes at the latest observation; closed codes are skipped', () => {
    const result = motive.normalize({ contentType: 'application/json', body: fixture('fault_codes.json') }, receivedAt);
    expect(rows(result)).toEqual([
      {
        vehicle: '41225',
        signal: 'dtcs',
        at: '2026-05-04T12:50:00.000Z',
        value: [
          { code: 'P203F', system: 'powertrain', mil: false },
          { code: 'C0035', system: 'chassis', mil: false },
        ],
      },
      {
        vehicle: '41226',
        signal: 'dtcs',
        at: '2026-05-04T09:30:00.000Z',
        value: [{ code: 'SPN3031-FMI9', system: 'j1939', mil: false }],
      },
    ]);
    if (!result.ok) throw new Error('normalize failed');
    expect(result.skipped.map((s) => s.reason)).toEqual(['fault P0420 of vehicle 41227 closed']);
  });

  it('declares its push rules: JSON bodies, a replay key per body (the signature covers no time)', () => {
    const rules = motive.push!;
    const request = (body: string) => ({ method: 'POST', headers: {}, pathToken: null, rawBody: Buffer.from(body) });
    expect(rules.bodyProblem('["fault_code_closed"]', 'application/json')).toBeNull();
    expect(rules.bodyProblem('nope', 'text/plain')).toBe('body is not valid JSON');
    expect(rules.replayKey!(request('{"a":1}'))).toBe(rules.replayKey!(request('{"a":1}')));
    expect(rules.replayKey!(request('{"a":1}'))).not.toBe(rules.replayKey!(request('{"a":1} ')));
  });
});

describe('motive client', () => {
  const now = new Date('2026-05-04T15:00:00Z');
  const context = () => pullContext(now);
  const rotation = (feed: number, cursors: Record<string, unknown>) => JSON.stringify({ feed, cursors });

  it('pages /v1/vehicle_locations with X-Api-Key, then moves on to the fault codes', async () => {
    const pages: Record<string, string> = {
      '1': fixture('vehicle_locations.mixed.json'),
      '2': fixture('vehicle_locations.page2.json'),
    };
    const api = await fakeMotive((request) => json(200, pages[query(request)?.page_no ?? ''] ?? '{}'));
    const config = { base_url: `${api.url}/`, api_token: 'motive-key' };

    const first = await motiveClient.pullFeed!(config, null, context());
    expect(first).toEqual({
      ok: true,
      page: {
        body: pages['1'],
        contentType: 'application/json; charset=utf-8',
        nextCursor: rotation(0, { locations: '2' }),
        hasMore: true,
      },
    });
    // A plain page number stored before the other lists existed is the locations sweep's.
    const second = await motiveClient.pullFeed!(config, '2', context());
    expect(second).toEqual({
      ok: true,
      page: {
        body: pages['2'],
        contentType: 'application/json; charset=utf-8',
        nextCursor: rotation(1, {}),
        hasMore: true,
      },
    });
    expect(api.requests.map((r) => [r.method, r.path, query(r), r.headers['x-api-key']])).toEqual([
      ['GET', '/v1/vehicle_locations', { per_page: '100', page_no: '1' }, 'motive-key'],
      ['GET', '/v1/vehicle_locations', { per_page: '100', page_no: '2' }, 'motive-key'],
    ]);
    // The stored page normalizes: page 2's one vehicle, 1000 mi → 1609.344 km.
    if (!second.ok) throw new Error('pull failed');
    expect(rows(motive.normalize({ contentType: 'application/json', body: second.page.body }, receivedAt))).toEqual([
      { vehicle: '41300', signal: 'odometer_km', at: '2026-05-04T13:59:00.000Z', value: 1609.344 },
      { vehicle: '41300', signal: 'battery_voltage', at: '2026-05-04T13:59:00.000Z', value: 12.4 },
      { vehicle: '41300', signal: 'speed_kph', at: '2026-05-04T13:59:00.000Z', value: 0 },
      {
        vehicle: '41300',
        signal: 'location',
        at: '2026-05-04T13:59:00.000Z',
        value: { lat: 40.71, lon: -74, heading: 180 },
      },
    ]);
  });

  it('takes turns: locations, fault codes, then driver performance events over a time window', async () => {
    const api = await fakeMotive((request) => {
      if (request.path === '/v1/vehicle_locations') return json(200, fixture('vehicle_locations.json'));
      if (request.path === '/v1/fault_codes') return json(200, fixture('fault_codes.json'));
      return json(200, fixture('driver_performance_events.json'));
    });
    const config = { base_url: api.url, api_token: 'k' };
    let cursor: string | null = null;
    const more: boolean[] = [];
    for (let i = 0; i < 3; i++) {
      const outcome = await pullMotiveFeed(config, cursor, context());
      if (!outcome.ok) throw new Error(JSON.stringify(outcome));
      cursor = outcome.page.nextCursor;
      more.push(outcome.page.hasMore);
    }
    expect(more).toEqual([true, true, false]);
    expect(api.requests.map((r) => [r.path, query(r)])).toEqual([
      ['/v1/vehicle_locations', { per_page: '100', page_no: '1' }],
      ['/v1/fault_codes', { per_page: '100', page_no: '1' }],
      [
        '/v1/driver_performance_events',
        { start_time: '2026-05-04T14:00:00.000Z', end_time: '2026-05-04T15:00:00.000Z', per_page: '100', page_no: '1' },
      ],
    ]);
    expect(cursor).toBe(
      rotation(0, { events: { since: '2026-05-04T14:00:00.000Z', until: '2026-05-04T15:00:00.000Z', page: null } }),
    );
    // The events page normalizes to harsh events for monitoring.
    const events = motive.normalize(
      { contentType: 'application/json', body: fixture('driver_performance_events.json') },
      receivedAt,
    );
    expect(events.ok && events.events.map((e) => e.kind)).toEqual(['hard_brake', 'hard_accel', 'hard_corner']);
  });

  it('pages inside one events window; the next window starts 10 minutes before the last one ended', async () => {
    const api = await fakeMotive((request) =>
      json(
        200,
        `{"driver_performance_events":[],"pagination":{"per_page":100,"page_no":${query(request)?.page_no},"total":150}}`,
      ),
    );
    const config = { base_url: api.url, api_token: 'k' };
    const last = { since: '2026-05-04T13:00:00.000Z', until: '2026-05-04T14:00:00.000Z', page: null };
    const window = { since: '2026-05-04T13:50:00.000Z', until: '2026-05-04T15:00:00.000Z' };
    const first = await pullMotiveFeed(config, rotation(2, { events: last }), context());
    expect(first).toMatchObject({
      ok: true,
      page: { nextCursor: rotation(2, { events: { ...window, page: '2' } }), hasMore: true },
    });
    // Later, the second page still asks for the same window.
    const second = await pullMotiveFeed(
      config,
      first.ok ? first.page.nextCursor : null,
      pullContext(new Date('2026-05-04T15:05:00Z')),
    );
    expect(second).toMatchObject({
      ok: true,
      page: { nextCursor: rotation(0, { events: { ...window, page: null } }), hasMore: false },
    });
    expect(api.requests.map((r) => [query(r)?.start_time, query(r)?.end_time, query(r)?.page_no])).toEqual([
      [window.since, window.until, '1'],
      [window.since, window.until, '2'],
    ]);
  });

  it('advances from the requested page even when the response echoes another page_no, honouring a capped per_page', async () => {
    const api = await fakeMotive(() =>
      json(200, '{"vehicles":[],"pagination":{"per_page":25,"page_no":1,"total":80}}'),
    );
    const config = { base_url: api.url, api_token: 'k' };
    // 3 × 25 < 80: page 4 is next; 4 × 25 ≥ 80: the last page.
    expect(await pullMotiveFeed(config, '3', context())).toMatchObject({
      ok: true,
      page: { nextCursor: rotation(0, { locations: '4' }), hasMore: true },
    });
    expect(await pullMotiveFeed(config, '4', context())).toMatchObject({
      ok: true,
      page: { nextCursor: rotation(1, {}), hasMore: true },
    });
  });

  it('treats a page without pagination as the last, and a garbled cursor as page 1', async () => {
    const api = await fakeMotive(() => json(200, '{"vehicles":[]}'));
    const outcome = await pullMotiveFeed({ base_url: api.url, api_token: 'k' }, 'abc', context());
    expect(outcome).toEqual({
      ok: true,
      page: {
        body: '{"vehicles":[]}',
        contentType: 'application/json; charset=utf-8',
        nextCursor: rotation(1, {}),
        hasMore: true,
      },
    });
    expect(query(api.requests[0])).toEqual({ per_page: '100', page_no: '1' });
  });

  it('reports 429 with Retry-After as rate_limited, 5xx and non-JSON bodies as failed', async () => {
    let reply = json(429, '{"error":"slow down"}', { 'retry-after': '7' });
    const api = await fakeMotive(() => reply);
    const config = { base_url: api.url, api_token: 'k' };
    expect(await pullMotiveFeed(config, '3', context())).toEqual({
      ok: false,
      kind: 'rate_limited',
      retryAfterMs: 7000,
    });
    reply = json(503, 'upstream down');
    expect(await pullMotiveFeed(config, null, context())).toEqual({
      ok: false,
      kind: 'failed',
      message: `HTTP 503 from ${new URL(api.url).host}: upstream down`,
    });
    expect(await pullMotiveVehicle(config, '41225', context())).toEqual({
      ok: false,
      kind: 'failed',
      message: `HTTP 503 from ${new URL(api.url).host}: upstream down`,
    });
    reply = json(200, '<html>');
    expect(await pullMotiveFeed(config, null, context())).toEqual({
      ok: false,
      kind: 'failed',
      message: 'motive /v1/vehicle_locations returned a body that is not JSON',
    });
    reply = json(200, '[1]');
    expect(await pullMotiveFeed(config, null, context())).toEqual({
      ok: false,
      kind: 'failed',
      message: 'motive /v1/vehicle_locations returned a body that is not a JSON object',
    });
    expect(await pullMotiveFeed({ api_token: 'k' }, null, context())).toEqual({
      ok: false,
      kind: 'failed',
      message: 'motive connection needs base_url and api_token',
    });
  });

  it('pulls one vehicle from /v3/vehicle_locations/<id> for yesterday..today and wraps the response with the id', async () => {
    const v3 = fixture('v3_vehicle_locations.json');
    const api = await fakeMotive(() => json(200, v3));
    const outcome = await pullMotiveVehicle(
      { base_url: api.url, api_token: 'motive-key' },
      '41225',
      pullContext(new Date('2026-05-04T00:30:00Z')),
    );
    expect(api.requests.map((r) => [r.method, r.path, query(r), r.headers['x-api-key']])).toEqual([
      ['GET', '/v3/vehicle_locations/41225', { start_date: '2026-05-03', end_date: '2026-05-04' }, 'motive-key'],
    ]);
    if (!outcome.ok) throw new Error('pull failed');
    expect(outcome.page.nextCursor).toBeNull();
    expect(outcome.page.hasMore).toBe(false);
    expect(outcome.page.contentType).toBe('application/json');
    expect(JSON.parse(outcome.page.body)).toEqual({ motive_vehicle_id: '41225', response: JSON.parse(v3) });
    const samples = rows(
      motive.normalize({ contentType: outcome.page.contentType, body: outcome.page.body }, receivedAt),
    );
    expect(samples).toHaveLength(9);
    expect(samples[0]).toEqual({
      vehicle: '41225',
      signal: 'odometer_km',
      at: '2026-05-04T10:00:00.000Z',
      value: 663524.48448,
    });
    await motiveClient.pullVehicle!({ base_url: api.url, api_token: 'motive-key' }, 'a/b', context());
    expect(api.requests[1]?.path).toBe('/v3/vehicle_locations/a%2Fb');
  });
});
