import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import { createMetrics } from '../../src/metrics.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let company: { id: string; key: string };
let vehicleId: string;

beforeAll(async () => {
  t = await createTestApp();
  company = await t.createCompany();
  vehicleId = (await t.createVehicle(company.id)).id;
});
afterAll(() => t.close());

const endpoints = () => [
  { method: 'GET' as const, url: '/api/v1/runs' },
  { method: 'GET' as const, url: '/api/v1/runs/00000000-0000-4000-8000-000000000000' },
  { method: 'GET' as const, url: '/api/v1/vehicles' },
  { method: 'GET' as const, url: `/api/v1/vehicles/${vehicleId}` },
  { method: 'PUT' as const, url: `/api/v1/vehicles/${vehicleId}`, payload: { name: 'x' } },
];

describe('API key authentication', () => {
  it('answers 401 with the error envelope for a missing, malformed or unknown key on every endpoint', async () => {
    for (const endpoint of endpoints()) {
      for (const authorization of [undefined, 'Basic abc', 'Bearer', `Bearer fk_${'x'.repeat(43)}`, company.key]) {
        const response = await t.app.inject({ ...endpoint, headers: authorization ? { authorization } : {} });
        expect(response.statusCode, `${endpoint.method} ${endpoint.url} with ${authorization}`).toBe(401);
        const body = response.json();
        expect(body).toMatchObject({ success: false, error: { code: 'UNAUTHORIZED' }, meta: { version: '1.0.0' } });
        expect(typeof body.error.message).toBe('string');
        expect(response.headers['www-authenticate']).toBe('Bearer');
      }
    }
  });

  it('accepts the key as a bearer token and records its use', async () => {
    const response = await t.api('GET', '/vehicles', company.key);
    expect(response.statusCode).toBe(200);
    await expect
      .poll(async () => {
        const keys = (await t.admin('GET', `/companies/${company.id}/api-keys`)).json().data;
        return keys[0].last_used_at;
      })
      .not.toBeNull();
  });

  it('stores only a hash: the key text appears nowhere in the database', async () => {
    const { rows } = await t.pool.query(`SELECT key_hash, key_prefix FROM api_keys WHERE company_id = $1`, [
      company.id,
    ]);
    expect(rows).toHaveLength(1);
    expect(rows[0].key_hash).toBeInstanceOf(Buffer);
    expect(rows[0].key_hash.length).toBe(32);
    const dump = JSON.stringify((await t.pool.query(`SELECT * FROM api_keys`)).rows);
    expect(dump).not.toContain(company.key);
    expect(company.key.startsWith(rows[0].key_prefix)).toBe(true);
  });

  it('a revoked key answers 401 on the very next request; other keys keep working', async () => {
    const second = (await t.admin('POST', `/companies/${company.id}/api-keys`, { name: 'second' })).json().data;
    expect((await t.api('GET', '/runs', second.key)).statusCode).toBe(200);
    const revoked = await t.admin('DELETE', `/api-keys/${second.id}`);
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json().data.revoked_at).not.toBeNull();
    expect(revoked.json().data).not.toHaveProperty('key');
    expect((await t.api('GET', '/runs', second.key)).statusCode).toBe(401);
    expect((await t.api('GET', '/runs', company.key)).statusCode).toBe(200);
  });

  it('a key revoked through one API process stops working in another that had it cached', async () => {
    const second = await buildApp({ ...t.deps, metrics: createMetrics('second') });
    try {
      const key = (await t.admin('POST', `/companies/${company.id}/api-keys`, { name: 'shared' })).json().data;
      const viaSecond = () =>
        second.inject({ method: 'GET', url: '/api/v1/runs', headers: { authorization: `Bearer ${key.key}` } });
      expect((await viaSecond()).statusCode).toBe(200);
      expect((await viaSecond()).statusCode).toBe(200);
      await t.admin('DELETE', `/api-keys/${key.id}`);
      await expect.poll(async () => (await viaSecond()).statusCode, { timeout: 2000, interval: 20 }).toBe(401);
    } finally {
      await second.close();
    }
  });

  it('shows the key once: listings never include it', async () => {
    const listed = (await t.admin('GET', `/companies/${company.id}/api-keys`)).json().data;
    for (const key of listed) expect(key).not.toHaveProperty('key');
  });
});

describe('operator token', () => {
  it('answers 401 for a missing or wrong operator token', async () => {
    for (const authorization of [undefined, 'Bearer wrong-token-0123456789', `Bearer ${company.key}`]) {
      const response = await t.app.inject({
        method: 'POST',
        url: '/admin/v1/companies',
        payload: { name: 'x' },
        headers: authorization ? { authorization } : {},
      });
      expect(response.statusCode).toBe(401);
      expect(response.json().error.code).toBe('UNAUTHORIZED');
    }
  });

  it('an API key is not an operator token and the operator token is not an API key', async () => {
    const response = await t.app.inject({
      method: 'GET',
      url: '/api/v1/runs',
      headers: { authorization: 'Bearer test-admin-token-0123456789' },
    });
    expect(response.statusCode).toBe(401);
  });
});

describe('operator API switched off', () => {
  it('does not exist when ADMIN_TOKEN is unset', async () => {
    const off = await createTestApp({ ADMIN_TOKEN: '' });
    try {
      const response = await off.admin('POST', '/companies', { name: 'x' });
      expect(response.statusCode).toBe(404);
      expect(response.json().error.code).toBe('NOT_FOUND');
    } finally {
      await off.close();
    }
  });
});
