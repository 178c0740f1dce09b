import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { geotab } from '../../../providers/geotab.js';
import { geotabClient } from '../../../providers/geotab.client.js';
import type { NormalizeResult } from '../../../providers/types.js';
import { startFakeProvider, type FakeProvider, type FakeRequest } from '../../helpers/fake-provider.js';
import { ok } from '../../helpers/normalized.js';

const receivedAt = new Date('2026-01-27T08:00:00Z');
const fixture = (name: string) => readFileSync(new URL(`../../fixtures/providers/geotab/${name}`, import.meta.url), 'utf8');
const normalize = (body: unknown) => geotab.normalize({ contentType: 'application/json', body: typeof body === 'string' ? body : JSON.stringify(body) }, receivedAt);

/** Samples as [device, signal, time, value] in output order. */
const rows = (result: NormalizeResult) => ok(result).samples.map((s) => [s.providerVehicleId, s.signal, s.recordedAt.toISOString(), s.value]);
const reasons = (result: NormalizeResult) => ok(result).skipped.map((s) => s.reason);
const tires = (partial: Record<string, number>) => ({ front_left: null, front_right: null, rear_left: null, rear_right: null, ...partial });

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
      ['b2A', 'dtcs', '2026-01-27T07:01:00.000Z', [{ code: 'DIAGNOSTICENGINEOILPRESSURELOWID', system: 'unknown', mil: true }]],
      ['b2A', 'check_engine_light', '2026-01-27T07:01:00.000Z', true],
      ['b2A', 'dtcs', '2026-01-27T07:02:00.000Z', [{ code: 'DIAGNOSTICCRANKINGVOLTAGEID', system: 'unknown', mil: false }]],
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
    const result = normalize({ result: [{ device: 'b9', diagnostic: 'DiagnosticFuelLevelId', dateTime: '2026-01-27T06:00:00Z', data: '55' }] });
    expect(rows(result)).toEqual([['b9', 'fuel_percent', '2026-01-27T06:00:00.000Z', 55]]);
  });

  it('turns a JSON-RPC error into ok:false and rejects other shapes without throwing', () => {
    expect(normalize(fixture('error-overlimit.json'))).toEqual({
      ok: false,
      reason: 'JSON-RPC error: JSONRPCError: API calls quota exceeded. Maximum admitted 10 per 1m.: OverLimitException',
    });
    expect(normalize('{"result": {')).toEqual({ ok: false, reason: 'body is not JSON' });
    expect(normalize({ result: 5 })).toEqual({ ok: false, reason: 'expected a JSON-RPC response {"result": ...}' });
    expect(normalize({ result: { toVersion: 'x' } })).toEqual({ ok: false, reason: 'expected a JSON-RPC response {"result": ...}' });
    expect(normalize([])).toEqual({ ok: false, reason: 'expected a JSON-RPC response {"result": ...}' });
    expect(normalize({ result: { toVersion: '01', data: [] } })).toEqual({ ok: true, samples: [], events: [], skipped: [], nextCursor: '01' });
  });

  it('is pull-only and supports refresh', () => {
    expect(geotab.id).toBe('geotab');
    expect(geotab.verifyPush).toBeNull();
    expect(geotab.refresh).toBe('supported');
  });
});

describe('geotab client against a fake JSON-RPC server on 127.0.0.1', () => {
  let api: FakeProvider;
  let baseUrl: string;
  /** The JSON-RPC body a request carried. */
  const sent = (request: FakeRequest) => JSON.parse(request.body || '{}') as Record<string, unknown>;

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
  afterEach(() => {
    vi.useRealTimers();
  });

  const config = () => ({ base_url: baseUrl, database: 'acme', username: 'api@acme.com', password: 'pw-secret' });
  const credentials = { database: 'acme', userName: 'api@acme.com', sessionId: '3oQ3pQvVNdeo8bWxhMLq1A' };
  const authenticated = { status: 200, body: fixture('authenticate.json') };
  const authenticateRequest = { method: 'Authenticate', params: { database: 'acme', userName: 'api@acme.com', password: 'pw-secret' } };

  it('authenticates, then GetFeed StatusData from the start (no fromVersion); toVersion is the cursor', async () => {
    const body = fixture('getfeed-statusdata.json');
    api.queue(authenticated, { status: 200, body });
    const outcome = await geotabClient.pullFeed!(config(), null, fetch);
    expect(outcome).toEqual({ ok: true, page: { body, contentType: 'application/json', nextCursor: '00000000021568d8', hasMore: false } });
    expect(api.requests.map((r) => [r.method, r.url, r.headers['content-type']])).toEqual([
      ['POST', '/apiv1', 'application/json'],
      ['POST', '/apiv1', 'application/json'],
    ]);
    expect(sent(api.requests[0]!)).toEqual(authenticateRequest);
    expect(sent(api.requests[1]!)).toEqual({ method: 'GetFeed', params: { typeName: 'StatusData', resultsLimit: 5000, credentials } });
  });

  it('continues from a cursor and reports more when the page is full', async () => {
    const record = { device: { id: 'b2A' }, diagnostic: { id: 'DiagnosticFuelLevelId' }, dateTime: '2026-01-27T06:46:00Z', data: 50 };
    const body = JSON.stringify({ result: { toVersion: '0000000002157000', data: Array.from({ length: 5000 }, () => record) } });
    api.queue(authenticated, { status: 200, body });
    const outcome = await geotabClient.pullFeed!({ ...config(), base_url: `${baseUrl}/` }, '00000000021568d8', fetch);
    expect(outcome).toMatchObject({ ok: true, page: { nextCursor: '0000000002157000', hasMore: true } });
    expect(api.requests[1]!.url).toBe('/apiv1');
    expect(sent(api.requests[1]!)).toEqual({ method: 'GetFeed', params: { typeName: 'StatusData', fromVersion: '00000000021568d8', resultsLimit: 5000, credentials } });
  });

  it('reports an OverLimitException as rate limited, with Retry-After when present', async () => {
    api.queue(authenticated, { status: 200, body: fixture('error-overlimit.json'), headers: { 'retry-after': '12' } });
    expect(await geotabClient.pullFeed!(config(), '01', fetch)).toEqual({ ok: false, kind: 'rate_limited', retryAfterMs: 12_000 });
    api.queue({ status: 200, body: fixture('error-overlimit.json') });
    expect(await geotabClient.pullFeed!(config(), '01', fetch)).toEqual({ ok: false, kind: 'rate_limited', retryAfterMs: 60_000 });
    expect(api.requests.map((r) => sent(r).method)).toEqual(['Authenticate', 'GetFeed', 'Authenticate']);
  });

  it('reports HTTP 429 with a fractional Retry-After as rate limited', async () => {
    api.queue({ status: 429, body: '', headers: { 'retry-after': '1.5' } });
    expect(await geotabClient.pullFeed!(config(), null, fetch)).toEqual({ ok: false, kind: 'rate_limited', retryAfterMs: 1500 });
  });

  it('reports other JSON-RPC errors, 5xx and incomplete results as failed, without the password', async () => {
    api.queue({ status: 200, body: fixture('error-invalid-user.json') });
    const invalid = await geotabClient.pullFeed!(config(), null, fetch);
    expect(invalid).toEqual({
      ok: false,
      kind: 'failed',
      message: 'geotab Authenticate failed: JSONRPCError: Incorrect login credentials: InvalidUserException',
    });
    expect(JSON.stringify(invalid)).not.toContain('pw-secret');
    expect(api.requests).toHaveLength(1);

    api.queue(authenticated, { status: 502, body: 'bad gateway' });
    expect(await geotabClient.pullFeed!(config(), null, fetch)).toEqual({ ok: false, kind: 'failed', message: `HTTP 502 from ${new URL(baseUrl).host}: bad gateway` });

    api.queue(authenticated, { status: 200, body: '{"result":{"data":[]}}' });
    expect(await geotabClient.pullFeed!(config(), null, fetch)).toEqual({ ok: false, kind: 'failed', message: 'geotab GetFeed result has no data and toVersion' });

    api.queue({ status: 200, body: '{"result":{"path":"ThisServer"}}' });
    expect(await geotabClient.pullFeed!(config(), null, fetch)).toEqual({ ok: false, kind: 'failed', message: 'geotab Authenticate returned no credentials' });

    const before = api.requests.length;
    expect(await geotabClient.pullFeed!({ base_url: baseUrl, database: 'acme' }, null, fetch)).toEqual({ ok: false, kind: 'failed', message: 'geotab connection needs database, username and password' });
    expect(api.requests).toHaveLength(before);
  });

  it('pulls one vehicle with Get StatusData for the last hour, with no cursor', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-01-27T08:00:00Z'));
    const body = fixture('get-records.json');
    api.queue(authenticated, { status: 200, body });
    const outcome = await geotabClient.pullVehicle!(config(), 'b2A', fetch);
    expect(outcome).toEqual({ ok: true, page: { body, contentType: 'application/json', nextCursor: null, hasMore: false } });
    expect(sent(api.requests[0]!)).toEqual(authenticateRequest);
    expect(sent(api.requests[1]!)).toEqual({
      method: 'Get',
      params: { typeName: 'StatusData', search: { deviceSearch: { id: 'b2A' }, fromDate: '2026-01-27T07:00:00.000Z' }, credentials },
    });
  });

  it('fails a vehicle pull whose Get result is not a list', async () => {
    api.queue(authenticated, { status: 200, body: '{"result":{"toVersion":"01","data":[]}}' });
    expect(await geotabClient.pullVehicle!(config(), 'b2A', fetch)).toEqual({ ok: false, kind: 'failed', message: 'geotab Get result is not a list' });
  });
});
