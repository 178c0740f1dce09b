/**
 * API_ROLE over real HTTP: an `ingest` process and a `read` process over the same database and
 * Redis, each listening on loopback. The ingest process takes pushes and answers the probes but
 * none of the public, console or operator routes; the read process serves those and refuses
 * pushes with the 404 envelope, storing nothing. A push through the one is read through the other.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hmacHex } from '../../providers/signing.js';
import { buildApp } from '../../src/api/app.js';
import type { ApiRole } from '../../src/config.js';
import { adminToken, createTestApp, type TestApp } from '../helpers/app.js';
import { createConnection } from '../helpers/ingest.js';

let t: TestApp;
let company: { id: string; key: string };
let connection: { id: string; secret: string };
let vehicleId: string;
const apps: FastifyInstance[] = [];
const base: Record<Exclude<ApiRole, 'all'>, string> = { ingest: '', read: '' };

async function listenAs(role: ApiRole): Promise<string> {
  const app = await buildApp({ ...t.deps, config: { ...t.config, apiRole: role } });
  apps.push(app);
  return app.listen({ port: 0, host: '127.0.0.1' });
}

beforeAll(async () => {
  t = await createTestApp();
  company = await t.createCompany();
  const created = await createConnection(t, company.id, 'generic');
  connection = { id: created.id, secret: created.generated_secret! };
  const vehicle = await t.createVehicle(company.id, {
    provider_connection_id: connection.id,
    provider_vehicle_id: 'truck-1',
  });
  vehicleId = vehicle.id;
  base.ingest = await listenAs('ingest');
  base.read = await listenAs('read');
  await t.startWorkers(['ingest']);
});
afterAll(async () => {
  for (const app of apps) await app.close();
  await t.close();
});

function push(role: keyof typeof base, fuelPercent: number): Promise<Response> {
  const body = JSON.stringify({
    readings: [{ vehicle: 'truck-1', ts: new Date().toISOString(), signals: { fuel_percent: fuelPercent } }],
  });
  return fetch(`${base[role]}/ingest/v1/generic/${connection.id}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-signature': `sha256=${hmacHex('sha256', connection.secret, body)}`,
    },
    body,
  });
}

const get = (role: keyof typeof base, path: string, token = company.key) =>
  fetch(`${base[role]}${path}`, { headers: { authorization: `Bearer ${token}` } });

async function inboxRows(): Promise<number> {
  const { rows } = await t.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ingest_inbox`);
  return rows[0]!.n;
}

describe('API_ROLE=ingest', () => {
  it('accepts provider pushes', async () => {
    const response = await push('ingest', 40);
    expect(response.status, await response.clone().text()).toBe(202);
    expect(((await response.json()) as any).data.inbox_id).toBeGreaterThan(0);
  });

  it('answers the probes and the metrics', async () => {
    for (const path of ['/healthz', '/readyz', '/metrics']) expect((await get('ingest', path)).status, path).toBe(200);
  });

  it('serves no public, console, operator or documentation route', async () => {
    for (const [path, token] of [
      [`/api/v1/vehicles/${vehicleId}`, company.key],
      ['/api/v1/vehicles', company.key],
      ['/v1/usage', company.key],
      ['/admin/v1/companies', adminToken],
      ['/console/sign-in', ''],
      ['/openapi.json', ''],
    ] as const) {
      const response = await get('ingest', path, token);
      expect(response.status, path).toBe(404);
      expect(((await response.json()) as any).error.code, path).toBe('NOT_FOUND');
    }
  });
});

describe('API_ROLE=read', () => {
  it('refuses provider pushes with the 404 envelope and stores nothing', async () => {
    const before = await inboxRows();
    const response = await push('read', 41);
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ success: false, error: { code: 'NOT_FOUND' } });
    const tokenPush = await fetch(`${base.read}/ingest/v1/traccar/${connection.id}/some-device-token?id=1`);
    expect(tokenPush.status).toBe(404);
    expect(await inboxRows()).toBe(before);
  });

  it('serves the public and operator APIs, the console, the documentation and the probes', async () => {
    for (const [path, token] of [
      [`/api/v1/vehicles/${vehicleId}`, company.key],
      ['/api/v1/vehicles', company.key],
      ['/admin/v1/companies', adminToken],
      ['/console/sign-in', ''],
      ['/openapi.json', ''],
      ['/healthz', ''],
      ['/readyz', ''],
      ['/metrics', ''],
    ] as const) {
      expect((await get('read', path, token)).status, path).toBe(200);
    }
  });

  it('shows a value pushed through the ingest process', async () => {
    expect((await push('ingest', 57)).status).toBe(202);
    let fuelPercent: unknown;
    for (let tries = 0; tries < 400 && fuelPercent !== 57; tries++) {
      const response = await get('read', `/api/v1/vehicles/${vehicleId}`);
      fuelPercent = ((await response.json()) as any).data.signals.fuel_percent;
      if (fuelPercent !== 57) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(fuelPercent).toBe(57);
  });
});
