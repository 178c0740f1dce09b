/**
 * METRICS_TOKEN (issue 16): when set, GET /metrics asks for it as a bearer token on the API and on
 * a worker process's ops server (a real `node dist/server/main.js worker` over loopback), answering
 * 401 with the error envelope otherwise; /healthz and /readyz stay open. Unset, /metrics is open
 * (test/integration/http-errors.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ProcessGroup, serviceEnv, type ServiceProcess } from '../helpers/processes.js';

const token = 'metrics-token-for-tests-0123456789';
const processes = new ProcessGroup();
let t: TestApp;
let worker: ServiceProcess;

beforeAll(async () => {
  t = await createTestApp({ METRICS_TOKEN: token });
  worker = await processes.start(['worker', 'maintenance'], serviceEnv(t, { METRICS_TOKEN: token }));
}, 90_000);
afterAll(async () => {
  await processes.killAll();
  await t.close();
});

const refusals: Array<[string, Record<string, string>]> = [
  ['no Authorization', {}],
  ['another token', { authorization: 'Bearer metrics-token-for-tests-0123456788' }],
  ['a prefix of the token', { authorization: `Bearer ${token.slice(0, -1)}` }],
  ['the token and more', { authorization: `Bearer ${token}0` }],
  ['the token as Basic credentials', { authorization: `Basic ${Buffer.from(`x:${token}`).toString('base64')}` }],
  ['an empty bearer', { authorization: 'Bearer ' }],
];

function expectRefused(status: number, body: any, headers: { get(name: string): string | null }, what: string) {
  expect(status, what).toBe(401);
  expect(body, what).toMatchObject({
    success: false,
    error: {
      code: 'UNAUTHORIZED',
      message: 'missing or invalid metrics token: send Authorization: Bearer <METRICS_TOKEN>',
    },
  });
  expect(headers.get('www-authenticate'), what).toBe('Bearer');
  expect(JSON.stringify(body), what).not.toContain(token);
}

describe('API process', () => {
  it('answers /metrics with the token and 401 with the error envelope without it', async () => {
    for (const [what, headers] of refusals) {
      const response = await t.app.inject({ method: 'GET', url: '/metrics', headers });
      expectRefused(
        response.statusCode,
        response.json(),
        { get: (n) => (response.headers[n] as string) ?? null },
        what,
      );
    }
    const allowed = await t.app.inject({
      method: 'GET',
      url: '/metrics',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(allowed.statusCode).toBe(200);
    expect(allowed.headers['content-type']).toMatch(/^text\/plain/);
    expect(allowed.body).toContain('# TYPE http_request_duration_seconds histogram');
  });

  it('keeps /healthz and /readyz open', async () => {
    expect((await t.app.inject('/healthz')).statusCode).toBe(200);
    expect((await t.app.inject('/readyz')).statusCode).toBe(200);
  });
});

describe('worker process', () => {
  it('asks for the token on its /metrics over HTTP; /healthz and /readyz stay open', async () => {
    for (const [what, headers] of refusals) {
      const response = await fetch(`${worker.url}/metrics`, { headers });
      expectRefused(response.status, await response.json(), response.headers, what);
    }
    const allowed = await fetch(`${worker.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    expect(allowed.status).toBe(200);
    expect(await allowed.text()).toContain('job_duration_seconds');
    expect((await fetch(`${worker.url}/healthz`)).status).toBe(200);
    expect((await worker.readyz()).status).toBe(200);
  });
});
