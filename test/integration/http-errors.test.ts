import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import { readMigrations } from '../../src/db/migrate.js';
import { createLogger } from '../../src/log.js';
import { createMetrics } from '../../src/metrics.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { midMinuteClock } from '../helpers/clock.js';

let t: TestApp;
let acme: { id: string; key: string };

beforeAll(async () => {
  // The per-key limit test counts exact answers in one rate-limit window.
  t = await createTestApp({ RATE_LIMIT_PER_MINUTE: '5', BODY_LIMIT_BYTES: '2048' }, midMinuteClock());
  acme = await t.createCompany();
});
afterAll(() => t.close());

function expectEnvelope(body: any, code: string) {
  expect(body.success).toBe(false);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  expect(body.meta.version).toBe('1.0.0');
  expect(JSON.stringify(body)).not.toMatch(/\bat .+\.(ts|js):\d+/);
}

describe('error envelope', () => {
  it('unknown routes answer 404 NOT_FOUND', async () => {
    for (const url of ['/nope', '/api/v1/nope', '/api/v2/runs', '/admin/v1/nope']) {
      const response = await t.app.inject({ method: 'GET', url });
      expect(response.statusCode).toBe(404);
      expectEnvelope(response.json(), 'NOT_FOUND');
    }
  });

  it('a body over the limit answers 413 PAYLOAD_TOO_LARGE over real HTTP', async () => {
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const vehicle = await t.createVehicle(acme.id);
    const response = await fetch(`${address}/api/v1/vehicles/${vehicle.id}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${acme.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'x'.repeat(4096) }),
    });
    expect(response.status).toBe(413);
    expectEnvelope(await response.json(), 'PAYLOAD_TOO_LARGE');
  });

  it('a non-JSON content type is a 400, not a crash', async () => {
    const vehicle = await t.createVehicle(acme.id);
    const response = await t.app.inject({
      method: 'PUT',
      url: `/api/v1/vehicles/${vehicle.id}`,
      headers: { authorization: `Bearer ${acme.key}`, 'content-type': 'text/plain' },
      payload: 'name=x',
    });
    expect(response.statusCode).toBe(400);
    expectEnvelope(response.json(), 'INVALID_REQUEST');
  });

  it('over the per-key rate limit answers 429 RATE_LIMITED with Retry-After; other keys are unaffected', async () => {
    const limited = await t.createCompany('Busy');
    const statuses: number[] = [];
    let last;
    for (let i = 0; i < 7; i++) {
      last = await t.api('GET', '/runs', limited.key);
      statuses.push(last.statusCode);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
    expect(Number(last!.headers['retry-after'])).toBeGreaterThan(0);
    expectEnvelope(last!.json(), 'RATE_LIMITED');
    expect((await t.api('GET', '/runs', acme.key)).statusCode).toBe(200);
  });

  it('an internal failure answers 500 INTERNAL_ERROR with no cause or stack', async () => {
    const broken = await createTestApp();
    try {
      const company = await broken.createCompany();
      await broken.pool.query('DROP TABLE runs CASCADE');
      const response = await broken.api('GET', '/runs', company.key);
      expect(response.statusCode).toBe(500);
      expectEnvelope(response.json(), 'INTERNAL_ERROR');
      expect(response.body).not.toContain('runs');
      expect(response.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    } finally {
      await broken.close();
    }
  });
});

describe('failed authentications', () => {
  it('are limited per client address: 429 with Retry-After, other addresses unaffected, valid keys never refused', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 62; i++) {
      const response = await t.app.inject({
        method: 'GET',
        url: '/api/v1/runs',
        remoteAddress: '203.0.113.9',
        headers: { authorization: 'Bearer fk_wrong' },
      });
      statuses.push(response.statusCode);
    }
    expect(statuses.slice(0, 60).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(60)).toEqual([429, 429]);
    const blocked = await t.app.inject({
      method: 'GET',
      url: '/api/v1/runs',
      remoteAddress: '203.0.113.9',
      headers: { authorization: `Bearer fk_${'x'.repeat(43)}` },
    });
    expect(blocked.statusCode).toBe(429);
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    expectEnvelope(blocked.json(), 'RATE_LIMITED');
    // Another client behind the same proxy or NAT address, with a valid key.
    const sameAddress = await t.app.inject({
      method: 'GET',
      url: '/api/v1/runs',
      remoteAddress: '203.0.113.9',
      headers: { authorization: `Bearer ${acme.key}` },
    });
    expect(sameAddress.statusCode).toBe(200);
    const other = await t.app.inject({
      method: 'GET',
      url: '/api/v1/runs',
      remoteAddress: '203.0.113.10',
      headers: { authorization: 'Bearer fk_wrong' },
    });
    expect(other.statusCode).toBe(401);
  });
});

describe('ops endpoints', () => {
  it('healthz and readyz report in the envelope', async () => {
    expect((await t.app.inject('/healthz')).json()).toMatchObject({ success: true, data: { status: 'alive' } });
    const ready = await t.app.inject('/readyz');
    expect(ready.statusCode).toBe(200);
    expect(ready.json().data).toEqual({ status: 'ready', checks: { postgres: 'ok', redis: 'ok', migrations: 'ok' } });
  });

  it('readyz answers 503 when migrations are pending', async () => {
    const app = await buildApp({
      ...t.deps,
      metrics: createMetrics('t'),
      migrationIds: [...readMigrations().map((m) => m.id), '9999_future'],
    });
    const response = await app.inject('/readyz');
    expect(response.statusCode).toBe(503);
    expect(response.json().error.details.checks).toEqual({ postgres: 'ok', redis: 'ok', migrations: 'failed' });
    await app.close();
  });

  it('metrics are Prometheus text with HTTP latency by route', async () => {
    await t.api('GET', '/vehicles', acme.key);
    const response = await t.app.inject('/metrics');
    expect(response.headers['content-type']).toMatch(/text\/plain/);
    expect(response.body).toMatch(/http_request_duration_seconds_count\{[^}]*route="\/api\/v1\/vehicles"[^}]*\} \d+/);
  });

  it('openapi.json documents every public and operator route, each with a schema', async () => {
    const doc = (await t.app.inject('/openapi.json')).json();
    expect(doc.info.version).toBe('1.0.0');
    for (const path of [
      '/api/v1/runs',
      '/api/v1/runs/{run_id}',
      '/api/v1/vehicles',
      '/api/v1/vehicles/{vehicle_id}',
      '/admin/v1/companies/{company_id}/service-requests',
    ]) {
      expect(doc.paths[path], path).toBeDefined();
    }
    for (const [path, operations] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        expect(
          Object.keys(operation.responses ?? {}).filter((code) => /^2\d\d$/.test(code)),
          `${method} ${path}`,
        ).not.toEqual([]);
      }
    }
    const docs = await t.app.inject('/docs/');
    expect(docs.statusCode).toBe(200);
    expect(docs.headers['content-type']).toMatch(/text\/html/);
  });
});

describe('logs', () => {
  it('redact credentials', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const log = createLogger('info', 'test', sink);
    log.info(
      {
        req: { headers: { authorization: `Bearer ${acme.key}` } },
        connection: { webhook_secret: 's3cr3t', api_token: 'tok' },
      },
      'request',
    );
    expect(lines.join('')).not.toContain(acme.key);
    expect(lines.join('')).not.toContain('s3cr3t');
    expect(lines.join('')).toContain('[redacted]');
  });

  it('log an error as type, message, code and stack, never the objects a library hung on it', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const log = createLogger('info', 'test', sink);
    // What pg-pool emits for an idle client that lost its server.
    const err = Object.assign(new Error('terminating connection due to administrator command'), {
      code: '57P01',
      client: { connectionParameters: { user: 'fleet', password: 'pg-pa55word' }, password: 'pg-pa55word' },
    });
    log.warn({ err }, 'idle postgres client failed');
    const line = JSON.parse(lines[0]!);
    expect(line.err).toMatchObject({
      type: 'Error',
      message: 'terminating connection due to administrator command',
      code: '57P01',
    });
    expect(line.err.stack).toContain('Error: terminating connection');
    expect(lines[0]).not.toContain('pg-pa55word');
    expect(line.err.client).toBeUndefined();
  });
});
