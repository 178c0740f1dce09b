import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { geotab } from '../../../providers/geotab.js';
import { geotabClient } from '../../../providers/geotab.client.js';
import type { NormalizeResult } from '../../../providers/types.js';
import { startFakeProvider, type FakeProvider, type FakeRequest } from '../../helpers/fake-provider.js';
import { ok } from '../../helpers/normalized.js';
import { pullContext } from '../../helpers/pull-context.js';

const receivedAt = new Date('2026-01-27T08:00:00Z');
const fixture = (name: string) =>
  readFileSync(new URL(`../../fixtures/providers/geotab/${name}`, import.meta.url), 'utf8');
const normalize = (body: unknown) =>
  geotab.normalize(
    { contentType: 'application/json', body: typeof body === 'string' ? body : JSON.stringify(body) },
    receivedAt,
  );

/** Samples as [device, signal, time, value] in output order. */
const rows = (result: NormalizeResult) =>
  ok(result).samples.map((s) => [s.providerVehicleId, s.signal, s.recordedAt.toISOString(), s.value]);
const reasons = (result: NormalizeResult) => ok(result).skipped.map((s) => s.reason);
const tires = (partial: Record<string, number>) => ({
  front_left: null,
  front_right: null,
  rear_left: null,
  rear_right: null,
  ...partial,
});

describe('geotab normalize', () => {
  it('maps the documented GetFeed StatusData sample and returns toVersion as the cursor', () => {
    const result = normalize(fixture('getfeed-statusdata.json'));
    expect(rows(result)).toEqual([
      ['b2A', 'gps_odometer_km', '2026-01-27T06:46:00.251Z', 99620.7], // 99620700 m (OdometerAdjustment)
      ['b2A', 'coolant_temp_c', '2026-01-27T06:46:02.000Z', 89],
    ]);
    expect(ok(result).nextCursor).toBe('00000000021568d8');
    expect(ok(result).events).toEqual([]);
    expect(ok(result).skipped).toEqual([]);
  });

  it('maps every StatusData diagnostic, ignores other diagnostics and skips bad records with a reason', () => {
    const result = normalize(fixture('getfeed-mixed.json'));
    expect(rows(result)).toEqual([
      ['b2A', 'odometer_km', '2026-01-27T06:50:00.000Z', 99700], // DiagnosticRawOdometerId, m
      ['b2A', 'odometer_km', '2026-01-27T06:40:00.000Z', 99600.5], // DiagnosticOdometerId, m
      ['b2A', 'fuel_percent', '2026-01-27T06:45:00.000Z', 47.5],
      ['b2A', 'battery_voltage', '2026-01-27T06:45:01.000Z', 13.72],
      ['b2A', 'engine_state', '2026-01-27T06:30:00.000Z', 'on'],
      ['b2A', 'engine_state', '2026-01-27T06:55:00.000Z', 'off'],
      ['b2A', 'tire_pressure_kpa', '2026-01-27T06:46:00.000Z', tires({ front_left: 758 })], // 758000 Pa
      ['b2A', 'tire_pressure_kpa', '2026-01-27T06:46:00.000Z', tires({ rear_right: 702.5 })], // 702500 Pa
    ]);
    expect(reasons(result)).toEqual([
      'fuel_percent is empty',
      'coolant_temp_c 250 out of range',
      'engine_state 2 unknown',
      'record without device id',
      'battery_voltage has no valid time',
      'no valid tire pressure',
      'record of unknown type',
      'record is not an object',
    ]);
    expect(ok(result).nextCursor).toBe('0000000002156a10');
  });

  it('maps LogRecord, FaultData and ExceptionEvent records of a Get result (no cursor)', () => {
    const result = normalize(fixture('get-records.json'));
    expect(rows(result)).toEqual([
      ['b2A', 'location', '2026-01-27T07:00:05.000Z', { lat: 43.4545, lon: -79.6833, heading: null }],
      ['b2A', 'speed_kph', '2026-01-27T07:00:05.000Z', 52], // km/h
      [
        'b2A',
        'dtcs',
        '2026-01-27T07:01:00.000Z',
        [{ code: 'DIAGNOSTICENGINEOILPRESSURELOWID', system: 'unknown', mil: true }],
      ],
      ['b2A', 'check_engine_light', '2026-01-27T07:01:00.000Z', true],
      [
        'b2A',
        'dtcs',
        '2026-01-27T07:02:00.000Z',
        [{ code: 'DIAGNOSTICCRANKINGVOLTAGEID', system: 'unknown', mil: false }],
      ],
      ['b2A', 'dtcs', '2026-01-27T08:00:00.000Z', []], // faultState Inactive
    ]);
    expect(ok(result).events).toEqual([
      { providerVehicleId: 'b2A', kind: 'hard_brake', recordedAt: new Date('2026-01-27T07:03:10Z'), g: null },
      { providerVehicleId: 'b2A', kind: 'hard_accel', recordedAt: new Date('2026-01-27T06:58:00Z'), g: null },
      { providerVehicleId: 'b2B', kind: 'hard_corner', recordedAt: new Date('2026-01-27T07:04:00Z'), g: null },
      { providerVehicleId: 'b2B', kind: 'impact', recordedAt: new Date('2026-01-27T07:05:00Z'), g: null },
    ]);
    // The 0,0 LogRecord is dropped with its speed; RuleSpeedingId is not a provider event.
    expect(reasons(result)).toEqual(['location 0,0 is no fix', 'exception RuleHarshBrakingId has no valid time']);
    expect(ok(result).nextCursor).toBeUndefined();
  });

  it('accepts bare id strings for entity references', () => {
    const result = normalize({
      result: [{ device: 'b9', diagnostic: 'DiagnosticFuelLevelId', dateTime: '2026-01-27T06:00:00Z', data: '55' }],
    });
    expect(rows(result)).toEqual([['b9', 'fuel_percent', '2026-01-27T06:00:00.000Z', 55]]);
  });

  it('turns a JSON-RPC error into ok:false and rejects other shapes without throwing', () => {
    expect(normalize(fixture('error-overlimit.json'))).toEqual({
      ok: false,
      reason: 'JSON-RPC error: JSONRPCError: API calls quota exceeded. Maximum admitted 10 per 1m.: OverLimitException',
    });
    expect(normalize('{"result": {')).toEqual({ ok: false, reason: 'body is not JSON' });
    expect(normalize({ result: 5 })).toEqual({ ok: false, reason: 'expected a JSON-RPC response {"result": ...}' });
    expect(normalize({ result: { toVersion: 'x' } })).toEqual({
      ok: false,
      reason: 'expected a JSON-RPC response {"result": ...}',
    });
    expect(normalize([])).toEqual({ ok: false, reason: 'expected a JSON-RPC response {"result": ...}' });
    expect(normalize({ result: { toVersion: '01', data: [] } })).toEqual({
      ok: true,
      samples: [],
      events: [],
      skipped: [],
      nextCursor: '01',
    });
  });

  it('is pull-only and supports refresh', () => {
    expect(geotab.id).toBe('geotab');
    expect(geotab.push).toBeNull();
    expect(geotab.refresh).toBe('supported');
  });
});

describe('geotab normalize: the LogRecord, FaultData and ExceptionEvent feeds', () => {
  it('maps LogRecord to location and speed, FaultData to dtcs, ExceptionEvent to events', () => {
    expect(rows(normalize(fixture('getfeed-logrecord.json')))).toEqual([
      ['b2A', 'location', '2026-01-27T06:47:00.000Z', { lat: 43.4545, lon: -79.6833, heading: null }],
      ['b2A', 'speed_kph', '2026-01-27T06:47:00.000Z', 52],
      ['b2A', 'location', '2026-01-27T06:47:30.000Z', { lat: 43.4561, lon: -79.6801, heading: null }],
      ['b2A', 'speed_kph', '2026-01-27T06:47:30.000Z', 61],
    ]);
    const faults = normalize(fixture('getfeed-faultdata.json'));
    expect(rows(faults)).toEqual([
      ['b2A', 'dtcs', '2026-01-27T06:48:00.000Z', [{ code: 'DIAGNOSTICABSFAULTID', system: 'unknown', mil: true }]],
      ['b2A', 'check_engine_light', '2026-01-27T06:48:00.000Z', true],
      ['b2B', 'dtcs', '2026-01-27T06:49:00.000Z', []],
    ]);
    expect(ok(faults).nextCursor).toBe('00000000001f3c05');
    expect(ok(normalize(fixture('getfeed-exceptionevent.json'))).events).toEqual([
      { providerVehicleId: 'b2A', kind: 'hard_brake', recordedAt: new Date('2026-01-27T06:47:10.000Z'), g: null },
      { providerVehicleId: 'b2A', kind: 'impact', recordedAt: new Date('2026-01-27T06:50:00.000Z'), g: null },
    ]);
  });

  it('reads an ExecuteMultiCall result (one list per Get) as one list of records', () => {
    expect(rows(normalize(fixture('multicall-vehicle.json')))).toEqual([
      ['b2A', 'odometer_km', '2026-01-27T07:40:00.000Z', 99700],
      ['b2A', 'battery_voltage', '2026-01-27T07:41:00.000Z', 13.8],
      ['b2A', 'location', '2026-01-27T07:42:00.000Z', { lat: 43.4545, lon: -79.6833, heading: null }],
      ['b2A', 'speed_kph', '2026-01-27T07:42:00.000Z', 48],
      ['b2A', 'dtcs', '2026-01-27T07:43:00.000Z', [{ code: 'DIAGNOSTICAIRBAGFAULTID', system: 'unknown', mil: false }]],
    ]);
  });
});

describe('geotab client against a fake JSON-RPC server on 127.0.0.1', () => {
  let api: FakeProvider;
  let baseUrl: string;
  /** The JSON-RPC body a request carried. */
  const sent = (request: FakeRequest) => JSON.parse(request.body || '{}') as Record<string, unknown>;
  const methods = () => api.requests.map((r) => sent(r).method);

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

  const now = new Date('2026-01-27T08:00:00Z');
  const context = () => pullContext(now);
  const config = () => ({ base_url: baseUrl, database: 'acme', username: 'api@acme.com', password: 'pw-secret' });
  const credentials = { database: 'acme', userName: 'api@acme.com', sessionId: '3oQ3pQvVNdeo8bWxhMLq1A' };
  const authenticated = { status: 200, body: fixture('authenticate.json') };
  const authenticateRequest = {
    method: 'Authenticate',
    params: { database: 'acme', userName: 'api@acme.com', password: 'pw-secret' },
  };
  const rotation = (feed: number, cursors: Record<string, string>) => JSON.stringify({ feed, cursors });

  it('authenticates, then GetFeed StatusData seeded an hour back; toVersion is its cursor', async () => {
    const body = fixture('getfeed-statusdata.json');
    api.queue(authenticated, { status: 200, body });
    const outcome = await geotabClient.pullFeed!(config(), null, context());
    expect(outcome).toEqual({
      ok: true,
      page: {
        body,
        contentType: 'application/json',
        nextCursor: rotation(1, { StatusData: '00000000021568d8' }),
        hasMore: true,
      },
    });
    expect(api.requests.map((r) => [r.method, r.url, r.headers['content-type']])).toEqual([
      ['POST', '/apiv1', 'application/json'],
      ['POST', '/apiv1', 'application/json'],
    ]);
    expect(sent(api.requests[0]!)).toEqual(authenticateRequest);
    expect(sent(api.requests[1]!)).toEqual({
      method: 'GetFeed',
      params: {
        typeName: 'StatusData',
        resultsLimit: 5000,
        search: { fromDate: '2026-01-27T07:00:00.000Z' },
        credentials,
      },
    });
  });

  it('pulls StatusData, LogRecord, FaultData and ExceptionEvent in turn, each from its own version, with one session', async () => {
    const feeds: Record<string, string> = {
      StatusData: fixture('getfeed-statusdata.json'),
      LogRecord: fixture('getfeed-logrecord.json'),
      FaultData: fixture('getfeed-faultdata.json'),
      ExceptionEvent: fixture('getfeed-exceptionevent.json'),
    };
    api.on('POST /apiv1', (request) => {
      const call = sent(request) as { method: string; params: { typeName: string } };
      return call.method === 'Authenticate' ? authenticated : { body: feeds[call.params.typeName] };
    });
    const shared = context();
    let cursor: string | null = rotation(0, { StatusData: '00000000021568d0', FaultData: '00000000001f3c00' });
    const more: boolean[] = [];
    for (let i = 0; i < 4; i++) {
      const outcome = await geotabClient.pullFeed!(config(), cursor, shared);
      if (!outcome.ok) throw new Error(JSON.stringify(outcome));
      cursor = outcome.page.nextCursor;
      more.push(outcome.page.hasMore);
    }
    expect(more).toEqual([true, true, true, false]);
    expect(methods()).toEqual(['Authenticate', 'GetFeed', 'GetFeed', 'GetFeed', 'GetFeed']);
    const params = api.requests.slice(1).map((r) => (sent(r) as { params: Record<string, unknown> }).params);
    expect(params.map((p) => [p.typeName, p.fromVersion, p.search])).toEqual([
      ['StatusData', '00000000021568d0', undefined],
      ['LogRecord', undefined, { fromDate: '2026-01-27T07:00:00.000Z' }],
      ['FaultData', '00000000001f3c00', undefined],
      ['ExceptionEvent', undefined, { fromDate: '2026-01-27T07:00:00.000Z' }],
    ]);
    expect(params.every((p) => JSON.stringify(p.credentials) === JSON.stringify(credentials))).toBe(true);
    expect(cursor).toBe(
      rotation(0, {
        StatusData: '00000000021568d8',
        LogRecord: '0000000003a10b20',
        FaultData: '00000000001f3c05',
        ExceptionEvent: '0000000000b0e0f2',
      }),
    );
  });

  it('a plain cursor stored before the other feeds existed continues StatusData; a full page means more of it', async () => {
    const record = {
      device: { id: 'b2A' },
      diagnostic: { id: 'DiagnosticFuelLevelId' },
      dateTime: '2026-01-27T06:46:00Z',
      data: 50,
    };
    const body = JSON.stringify({
      result: { toVersion: '0000000002157000', data: Array.from({ length: 5000 }, () => record) },
    });
    api.queue(authenticated, { status: 200, body });
    const outcome = await geotabClient.pullFeed!(
      { ...config(), base_url: `${baseUrl}/` },
      '00000000021568d8',
      context(),
    );
    expect(outcome).toMatchObject({
      ok: true,
      page: { nextCursor: rotation(0, { StatusData: '0000000002157000' }), hasMore: true },
    });
    expect(api.requests[1]!.url).toBe('/apiv1');
    expect(sent(api.requests[1]!)).toEqual({
      method: 'GetFeed',
      params: { typeName: 'StatusData', fromVersion: '00000000021568d8', resultsLimit: 5000, credentials },
    });
  });

  it('re-authenticates once when the cached session is refused with InvalidUserException', async () => {
    const shared = context();
    api.queue(authenticated, { status: 200, body: fixture('getfeed-statusdata.json') });
    expect(await geotabClient.pullFeed!(config(), null, shared)).toMatchObject({ ok: true });
    // The session expired on Geotab's side: the call is refused, a new session is made, the call repeated.
    api.queue(
      { status: 200, body: fixture('error-invalid-user.json') },
      { status: 200, body: fixture('authenticate.json').replace('3oQ3pQvVNdeo8bWxhMLq1A', 'fresh-session') },
      { status: 200, body: fixture('getfeed-logrecord.json') },
    );
    expect(await geotabClient.pullFeed!(config(), rotation(1, {}), shared)).toMatchObject({ ok: true });
    expect(methods()).toEqual(['Authenticate', 'GetFeed', 'GetFeed', 'Authenticate', 'GetFeed']);
    const last = sent(api.requests[4]!) as { params: { credentials: Record<string, string> } };
    expect(last.params.credentials.sessionId).toBe('fresh-session');
    // A session refused right after Authenticate is a wrong login, not an expiry: no loop.
    api.reset();
    shared.sessions.clear();
    api.queue(authenticated, { status: 200, body: fixture('error-invalid-user.json') });
    expect(await geotabClient.pullFeed!(config(), null, shared)).toEqual({
      ok: false,
      kind: 'failed',
      message: 'geotab GetFeed failed: JSONRPCError: Incorrect login credentials: InvalidUserException',
    });
    expect(methods()).toEqual(['Authenticate', 'GetFeed']);
  });

  it('follows the server Authenticate names in path, over https', async () => {
    const shared = pullContext(now, { timeoutMs: 3_000 });
    api.queue({ status: 200, body: '{"result":{"credentials":{"sessionId":"s"},"path":"my9.geotab.test"}}' });
    const outcome = await geotabClient.pullFeed!(config(), null, shared);
    // The named server is not resolvable here; what matters is that the call went there, not back to base_url.
    expect(outcome).toMatchObject({ ok: false, kind: 'failed', message: expect.stringContaining('my9.geotab.test') });
    expect(methods()).toEqual(['Authenticate']);
    expect([...shared.sessions.values()]).toEqual([
      { apiUrl: 'https://my9.geotab.test/apiv1', credentials: { sessionId: 's' } },
    ]);
  });

  it('reports an OverLimitException as rate limited, with Retry-After when present', async () => {
    const shared = context();
    api.queue(authenticated, { status: 200, body: fixture('error-overlimit.json'), headers: { 'retry-after': '12' } });
    expect(await geotabClient.pullFeed!(config(), '01', shared)).toEqual({
      ok: false,
      kind: 'rate_limited',
      retryAfterMs: 12_000,
    });
    api.queue({ status: 200, body: fixture('error-overlimit.json') });
    expect(await geotabClient.pullFeed!(config(), '01', shared)).toEqual({
      ok: false,
      kind: 'rate_limited',
      retryAfterMs: 60_000,
    });
    // The second pull reused the session.
    expect(methods()).toEqual(['Authenticate', 'GetFeed', 'GetFeed']);
  });

  it('reports HTTP 429 with a fractional Retry-After as rate limited', async () => {
    api.queue({ status: 429, body: '', headers: { 'retry-after': '1.5' } });
    expect(await geotabClient.pullFeed!(config(), null, context())).toEqual({
      ok: false,
      kind: 'rate_limited',
      retryAfterMs: 1500,
    });
  });

  it('reports other JSON-RPC errors, 5xx and incomplete results as failed, without the password', async () => {
    api.queue({ status: 200, body: fixture('error-invalid-user.json') });
    const invalid = await geotabClient.pullFeed!(config(), null, context());
    expect(invalid).toEqual({
      ok: false,
      kind: 'failed',
      message: 'geotab Authenticate failed: JSONRPCError: Incorrect login credentials: InvalidUserException',
    });
    expect(JSON.stringify(invalid)).not.toContain('pw-secret');
    expect(api.requests).toHaveLength(1);

    api.queue(authenticated, { status: 502, body: 'bad gateway' });
    expect(await geotabClient.pullFeed!(config(), null, context())).toEqual({
      ok: false,
      kind: 'failed',
      message: `HTTP 502 from ${new URL(baseUrl).host}: bad gateway`,
    });

    api.queue(authenticated, { status: 200, body: '{"result":{"data":[]}}' });
    expect(await geotabClient.pullFeed!(config(), null, context())).toEqual({
      ok: false,
      kind: 'failed',
      message: 'geotab GetFeed result has no data and toVersion',
    });

    api.queue({ status: 200, body: '{"result":{"path":"ThisServer"}}' });
    expect(await geotabClient.pullFeed!(config(), null, context())).toEqual({
      ok: false,
      kind: 'failed',
      message: 'geotab Authenticate returned no credentials',
    });

    const before = api.requests.length;
    expect(await geotabClient.pullFeed!({ base_url: baseUrl, database: 'acme' }, null, context())).toEqual({
      ok: false,
      kind: 'failed',
      message: 'geotab connection needs database, username and password',
    });
    expect(api.requests).toHaveLength(before);
  });

  it('pulls one vehicle: StatusData, LogRecord and FaultData of the last hour in one ExecuteMultiCall', async () => {
    const body = fixture('multicall-vehicle.json');
    api.queue(authenticated, { status: 200, body });
    const outcome = await geotabClient.pullVehicle!(config(), 'b2A', context());
    expect(outcome).toEqual({
      ok: true,
      page: { body, contentType: 'application/json', nextCursor: null, hasMore: false },
    });
    expect(sent(api.requests[0]!)).toEqual(authenticateRequest);
    const search = { deviceSearch: { id: 'b2A' }, fromDate: '2026-01-27T07:00:00.000Z' };
    expect(sent(api.requests[1]!)).toEqual({
      method: 'ExecuteMultiCall',
      params: {
        calls: ['StatusData', 'LogRecord', 'FaultData'].map((typeName) => ({
          method: 'Get',
          params: { typeName, search },
        })),
        credentials,
      },
    });
  });

  it('fails a vehicle pull whose result is not a list of lists', async () => {
    api.queue(authenticated, { status: 200, body: '{"result":{"toVersion":"01","data":[]}}' });
    expect(await geotabClient.pullVehicle!(config(), 'b2A', context())).toEqual({
      ok: false,
      kind: 'failed',
      message: 'geotab ExecuteMultiCall result is not a list of lists',
    });
  });
});
