/**
 * The failed-authentication limit behind proxies and NAT: a valid key is never refused, failures
 * are counted per client address, and the client address is the forwarded one only when
 * TRUST_PROXY says whom to trust.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

const apps: TestApp[] = [];
afterAll(() => Promise.all(apps.map((a) => a.close())));

async function appWith(env: Record<string, string>): Promise<{ t: TestApp; key: string }> {
  const t = await createTestApp(env);
  apps.push(t);
  return { t, key: (await t.createCompany()).key };
}

const wrongKey = `fk_${'w'.repeat(43)}`;

function get(t: TestApp, key: string, remoteAddress: string, forwardedFor?: string) {
  return t.app.inject({
    method: 'GET',
    url: '/api/v1/vehicles',
    remoteAddress,
    headers: { authorization: `Bearer ${key}`, ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}) },
  });
}

async function failTimes(t: TestApp, n: number, remoteAddress: string, forwardedFor?: (i: number) => string) {
  const statuses: number[] = [];
  for (let i = 0; i < n; i++) statuses.push((await get(t, wrongKey, remoteAddress, forwardedFor?.(i))).statusCode);
  return statuses;
}

describe('without TRUST_PROXY (clients connect directly)', () => {
  let t: TestApp;
  let key: string;
  beforeAll(async () => ({ t, key } = await appWith({})));

  it('valid keys behind an address whose failures are refused keep working', async () => {
    const nat = '198.51.100.20';
    const statuses = await failTimes(t, 61, nat);
    expect(statuses.slice(0, 60).every((s) => s === 401)).toBe(true);
    expect(statuses[60]).toBe(429);
    for (let i = 0; i < 5; i++) expect((await get(t, key, nat)).statusCode).toBe(200);
    // A missing key is a failure like a wrong one.
    const missing = await t.app.inject({ method: 'GET', url: '/api/v1/vehicles', remoteAddress: nat });
    expect(missing.statusCode).toBe(429);
    expect(missing.json().error.code).toBe('RATE_LIMITED');
  });

  it('ignores X-Forwarded-For, so a client cannot escape its own limit by forging it', async () => {
    const statuses = await failTimes(t, 62, '198.51.100.21', (i) => `203.0.113.${i}`);
    expect(statuses.slice(60)).toEqual([429, 429]);
  });
});

describe('TRUST_PROXY with the proxy address', () => {
  let t: TestApp;
  let key: string;
  // inject() connects from 127.0.0.1: that is the proxy.
  beforeAll(async () => ({ t, key } = await appWith({ TRUST_PROXY: '127.0.0.1/32' })));

  it('counts failures per forwarded client, not per proxy', async () => {
    const statuses = await failTimes(t, 61, '127.0.0.1', () => '203.0.113.50');
    expect(statuses[60]).toBe(429);
    expect((await get(t, wrongKey, '127.0.0.1', '203.0.113.51')).statusCode).toBe(401);
    expect((await get(t, key, '127.0.0.1', '203.0.113.50')).statusCode).toBe(200);
    // A forged hop in front of the real client does not change who the proxy says it is.
    expect((await get(t, wrongKey, '127.0.0.1', '10.9.9.9, 203.0.113.50')).statusCode).toBe(429);
  });

  it('does not trust X-Forwarded-For from a peer that is not the proxy', async () => {
    const statuses = await failTimes(t, 61, '198.51.100.30', (i) => `203.0.113.${100 + i}`);
    expect(statuses[60]).toBe(429);
  });
});

describe('TRUST_PROXY as a hop count', () => {
  it('takes the client that many hops back', async () => {
    const { t } = await appWith({ TRUST_PROXY: '1' });
    const statuses = await failTimes(t, 61, '10.0.0.2', (i) => `192.0.2.${i}, 203.0.113.77`);
    expect(statuses[60]).toBe(429);
    expect((await get(t, wrongKey, '10.0.0.2', '203.0.113.78')).statusCode).toBe(401);
  });
});
