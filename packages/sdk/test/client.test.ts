/**
 * The client against a scripted `fetch`: what it sends, how it pages, which failures it retries
 * and how long it waits, and what it throws. The same client against the real service:
 * test/integration/sdk.test.ts at the repository root.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  ApiError,
  AuthenticationError,
  ConflictError,
  ConnectionError,
  createClient,
  InternalServerError,
  NotFoundError,
  RateLimitError,
  UnprocessableEntityError,
  type Meta,
} from '../src/index.js';
import { sdkVersion } from '../src/transport.js';

interface Seen {
  method: string;
  url: URL;
  headers: Headers;
  body: unknown;
  at: number;
}

type Answer = Response | Error | ((seen: Seen) => Response | Error);

/** A fetch that records each request and answers from `answers` in order (the last one repeats). */
function scripted(...answers: Answer[]) {
  const seen: Seen[] = [];
  const fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request: Seen = {
      method: init?.method ?? 'GET',
      url: new URL(String(input)),
      headers: new Headers(init?.headers),
      body: init?.body === undefined ? undefined : JSON.parse(String(init.body)),
      at: Date.now(),
    };
    seen.push(request);
    const next = answers.length > 1 ? answers.shift()! : answers[0]!;
    const answer = typeof next === 'function' ? next(request) : next;
    if (answer instanceof Error) throw answer;
    return answer.clone();
  };
  return { fetch: fetch as typeof globalThis.fetch, seen };
}

const meta: Meta = { limit: null, offset: null, total: null, timestamp: '2026-11-26T00:00:00.000Z', version: '1.0.0' };
const ok = (data: unknown, status = 200, pageMeta = meta) =>
  new Response(JSON.stringify({ success: true, data, meta: pageMeta }), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'req-ok' },
  });
const failure = (status: number, code: string, headers: Record<string, string> = {}, details: unknown = null) =>
  new Response(JSON.stringify({ success: false, error: { code, message: `${code} happened`, details }, meta }), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'x-request-id': `req-${status}`, ...headers },
  });

const baseUrl = 'https://fleet.example.com/';
const apiKey = 'sk_test_123';

describe('requests', () => {
  it('send the key, JSON body and path parameters, and answer the envelope data', async () => {
    const { fetch, seen } = scripted(ok({ id: 'v/1', name: 'Van 7' }));
    const client = createClient({ baseUrl, apiKey, fetch });
    const vehicle = await client.updateVehicle('v/1', { name: 'Van 7' });
    expect(vehicle).toEqual({ id: 'v/1', name: 'Van 7' });
    expect(seen[0]).toMatchObject({ method: 'PUT', body: { name: 'Van 7' } });
    expect(seen[0]!.url.href).toBe('https://fleet.example.com/api/v1/vehicles/v%2F1');
    expect(seen[0]!.headers.get('authorization')).toBe(`Bearer ${apiKey}`);
    expect(seen[0]!.headers.get('content-type')).toBe('application/json');
    expect(seen[0]!.headers.get('user-agent')).toBe(`fleet-telematics-sdk/${sdkVersion}`);
    const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(sdkVersion).toBe(manifest.version);
    expect(seen[0]!.headers.get('idempotency-key')).toBeNull();
  });

  it('put query parameters in the query string, leaving out undefined ones', async () => {
    const { fetch, seen } = scripted(ok([]));
    await createClient({ baseUrl, apiKey, fetch }).listRuns({ status: 'open', limit: 10, updated_since: undefined });
    expect(seen[0]!.url.search).toBe('?status=open&limit=10');
  });

  it('send {} when a body with only optional fields is left out', async () => {
    const { fetch, seen } = scripted(ok({ refresh_id: 'r', provider: 'samsara', status: 'queued', cascade: true }));
    await createClient({ baseUrl, apiKey, fetch }).refreshVehicle('v1');
    expect(seen[0]).toMatchObject({ method: 'POST', body: {} });
  });

  it('need a base URL and a key', () => {
    expect(() => createClient({ baseUrl: '', apiKey })).toThrow(/baseUrl/);
    expect(() => createClient({ baseUrl, apiKey: '' })).toThrow(/apiKey/);
  });
});

describe('errors', () => {
  it('carry the envelope: status, code, message, details and the request id, by class', async () => {
    const cases: Array<[Response, new (...args: never[]) => ApiError]> = [
      [failure(401, 'UNAUTHORIZED'), AuthenticationError],
      [failure(404, 'NOT_FOUND'), NotFoundError],
      [failure(409, 'ODOMETER_CONFLICT'), ConflictError],
      [failure(422, 'IDEMPOTENCY_KEY_REUSED'), UnprocessableEntityError],
    ];
    for (const [answer, Class] of cases) {
      const { fetch } = scripted(answer);
      const error = await createClient({ baseUrl, apiKey, fetch })
        .getVehicle('v1')
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Class);
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ status: answer.status, requestId: `req-${answer.status}` });
      expect((error as ApiError).message).toBe(`${(error as ApiError).code} happened`);
    }
    const { fetch } = scripted(
      failure(400, 'INVALID_REQUEST', {}, { errors: [{ field: 'limit', message: 'must be <= 200' }] }),
    );
    const invalid = await createClient({ baseUrl, apiKey, fetch })
      .listVehicles({ limit: 500 })
      .catch((e: unknown) => e);
    expect(invalid).toMatchObject({
      status: 400,
      code: 'INVALID_REQUEST',
      details: { errors: [{ field: 'limit', message: 'must be <= 200' }] },
    });
  });

  it('name the status when the body is not the envelope (a proxy page)', async () => {
    const { fetch } = scripted(new Response('<html>Bad gateway</html>', { status: 502 }));
    const error = await createClient({ baseUrl, apiKey, fetch, maxRetries: 0 })
      .getUsage()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error).toMatchObject({ status: 502, code: 'HTTP_502', requestId: null });
  });
});

describe('retries', () => {
  it('wait the Retry-After of a 429 and of a 503, then succeed', async () => {
    const { fetch, seen } = scripted(
      failure(429, 'RATE_LIMITED', { 'retry-after': '1' }),
      failure(503, 'SERVICE_UNAVAILABLE', { 'retry-after': '1' }),
      ok({ id: 'v1' }),
    );
    const vehicle = await createClient({ baseUrl, apiKey, fetch }).getVehicle('v1');
    expect(vehicle).toEqual({ id: 'v1' });
    expect(seen).toHaveLength(3);
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(990);
    expect(seen[2]!.at - seen[1]!.at).toBeGreaterThanOrEqual(990);
  });

  it('stop after maxRetries and throw the last answer', async () => {
    const { fetch, seen } = scripted(failure(429, 'RATE_LIMITED', { 'retry-after': '0' }));
    const error = await createClient({ baseUrl, apiKey, fetch, maxRetries: 2 })
      .listGeofences()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ code: 'RATE_LIMITED', retryAfterSeconds: null });
    expect(seen).toHaveLength(3);
  });

  it('do not wait a Retry-After longer than maxRetryDelayMs: the error is thrown at once', async () => {
    const { fetch, seen } = scripted(failure(429, 'RATE_LIMITED', { 'retry-after': '30' }));
    const error = await createClient({ baseUrl, apiKey, fetch, maxRetryDelayMs: 5_000 })
      .getVehicle('v1')
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 429, retryAfterSeconds: 30 });
    expect(seen).toHaveLength(1);
  });

  it('back off on a network failure of a GET, then succeed', async () => {
    const { fetch, seen } = scripted(new TypeError('fetch failed'), ok({ id: 'v1' }));
    expect(await createClient({ baseUrl, apiKey, fetch }).getVehicle('v1')).toEqual({ id: 'v1' });
    expect(seen).toHaveLength(2);
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(240);
  });

  it('never resend a POST without an Idempotency-Key: it may have run', async () => {
    for (const answer of [failure(503, 'SERVICE_UNAVAILABLE', { 'retry-after': '0' }), new TypeError('reset')]) {
      const { fetch, seen } = scripted(answer, ok({ id: 'g1' }, 201));
      const error = await createClient({ baseUrl, apiKey, fetch })
        .createGeofence({ name: 'Depot', area: { type: 'Circle', center: { lat: 1, lon: 2 }, radius_m: 100 } })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(answer instanceof Error ? ConnectionError : InternalServerError);
      expect(seen).toHaveLength(1);
    }
  });

  it('give a paid call an Idempotency-Key, the same on each retry, and retry IDEMPOTENCY_KEY_IN_USE', async () => {
    const answer = { odometer: { value: 1 } };
    const { fetch, seen } = scripted(
      failure(503, 'SERVICE_UNAVAILABLE', { 'retry-after': '0' }),
      failure(409, 'IDEMPOTENCY_KEY_IN_USE', { 'retry-after': '0' }),
      ok(answer),
    );
    expect(await createClient({ baseUrl, apiKey, fetch }).verifyVehicle({ vin: '1HGCM82633A004352' })).toEqual(answer);
    const keys = seen.map((s) => s.headers.get('idempotency-key'));
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(keys)).toEqual(new Set([keys[0]]));
  });

  it("send the caller's own Idempotency-Key, and a new one per call otherwise", async () => {
    const { fetch, seen } = scripted(ok({ report_id: 'r' }));
    const client = createClient({ baseUrl, apiKey, fetch });
    await client.createHistoryReport({ vin: '1HGCM82633A004352' }, { idempotencyKey: 'order-42' });
    await client.createHistoryReport({ vin: '1HGCM82633A004352' });
    await client.createHistoryReport({ vin: '1HGCM82633A004352' });
    const [mine, first, second] = seen.map((s) => s.headers.get('idempotency-key'));
    expect(mine).toBe('order-42');
    expect(first).not.toBe(second);
  });

  it('stop waiting when the caller aborts', async () => {
    const { fetch, seen } = scripted(failure(429, 'RATE_LIMITED', { 'retry-after': '20' }));
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('stopped')), 50);
    const error = await createClient({ baseUrl, apiKey, fetch })
      .getVehicle('v1', { signal: controller.signal })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ message: 'stopped' });
    expect(seen).toHaveLength(1);
  });
});

describe('paging', () => {
  /** A list of `count` items served by limit and offset, like the service's. */
  function list(count: number, withTotal: boolean) {
    return (seen: Seen) => {
      const limit = Number(seen.url.searchParams.get('limit') ?? 50);
      const offset = Number(seen.url.searchParams.get('offset') ?? 0);
      const items = Array.from({ length: Math.max(0, Math.min(limit, count - offset)) }, (_, i) => ({
        id: `v${offset + i}`,
      }));
      return ok(items, 200, { ...meta, limit, offset, total: withTotal ? count : null });
    };
  }

  it('await one page; iterate every item of every page from the given offset', async () => {
    for (const withTotal of [false, true]) {
      const { fetch, seen } = scripted(list(7, withTotal));
      const client = createClient({ baseUrl, apiKey, fetch });
      const page = await client.listVehicles({ limit: 3 });
      expect(page.data.map((v) => v.id)).toEqual(['v0', 'v1', 'v2']);
      expect(page.meta).toMatchObject({ limit: 3, offset: 0 });

      seen.length = 0;
      const ids: string[] = [];
      for await (const vehicle of client.listVehicles({ limit: 3, offset: 1 })) ids.push(vehicle.id);
      expect(ids).toEqual(['v1', 'v2', 'v3', 'v4', 'v5', 'v6']);
      // Without meta.total a full last page cannot tell it is the last: one more (empty) page says so.
      expect(seen.map((s) => s.url.searchParams.get('offset'))).toEqual(withTotal ? ['1', '4'] : ['1', '4', '7']);
    }
  });

  it('stop at an empty first page, and after a full last page with an empty one', async () => {
    const { fetch, seen } = scripted(list(6, false));
    const ids: string[] = [];
    for await (const vehicle of createClient({ baseUrl, apiKey, fetch }).listVehicles({ limit: 3 }))
      ids.push(vehicle.id);
    expect(ids).toHaveLength(6);
    expect(seen).toHaveLength(3);
  });
});
