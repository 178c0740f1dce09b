/**
 * The push endpoint's guards against replays and noisy neighbours: deduplication within the
 * replay window (per connection, atomic with the inbox row), signed timestamps, and the
 * per-connection rate limit shared through Redis that fails open when Redis is gone.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hmacHex } from '../../providers/signing.js';
import { buildApp } from '../../src/api/app.js';
import { projectRoot } from '../../src/paths.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createConnection, pushGeneric } from '../helpers/ingest.js';

const fixture = (provider: string, file: string) =>
  readFileSync(join(projectRoot, 'test/fixtures/providers', provider, file), 'utf8');

async function inboxRows(t: TestApp, connectionId: string): Promise<number> {
  const { rows } = await t.pool.query(`SELECT count(*)::int AS n FROM ingest_inbox WHERE connection_id = $1`, [
    connectionId,
  ]);
  return rows[0].n;
}

async function genericConnection(t: TestApp, companyId: string) {
  const connection = await createConnection(t, companyId, 'generic');
  return { id: connection.id, secret: connection.generated_secret! };
}

const readings = (ts: string) => ({ readings: [{ vehicle: 'truck-1', ts, signals: { fuel_percent: 50 } }] });

describe('replays', () => {
  let t: TestApp;
  let companyId: string;
  beforeAll(async () => {
    t = await createTestApp();
    companyId = (await t.createCompany()).id;
  });
  afterAll(() => t.close());

  it('generic: the same body again is a duplicate of the first push (202, same row), stored once', async () => {
    const connection = await genericConnection(t, companyId);
    const first = await pushGeneric(t, 'generic', connection.id, connection.secret, readings('2026-11-20T10:00:00Z'));
    expect(first.statusCode).toBe(202);
    expect(first.json().data.duplicate).toBe(false);
    const again = await pushGeneric(t, 'generic', connection.id, connection.secret, readings('2026-11-20T10:00:00Z'));
    expect(again.statusCode).toBe(202);
    expect(again.json().data).toEqual({ ...first.json().data, duplicate: true });
    const other = await pushGeneric(t, 'generic', connection.id, connection.secret, readings('2026-11-20T10:01:00Z'));
    expect(other.json().data.duplicate).toBe(false);
    expect(await inboxRows(t, connection.id)).toBe(2);
    // Another connection's identical body is its own push.
    const neighbour = await genericConnection(t, companyId);
    const body = JSON.stringify(readings('2026-11-20T10:00:00Z'));
    expect((await pushGeneric(t, 'generic', neighbour.id, neighbour.secret, body)).json().data.duplicate).toBe(false);
    expect(await inboxRows(t, neighbour.id)).toBe(1);
  });

  it('the same push sent five times at once is stored once; every answer names that row', async () => {
    const connection = await genericConnection(t, companyId);
    const body = JSON.stringify(readings('2026-11-20T11:00:00Z'));
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => pushGeneric(t, 'generic', connection.id, connection.secret, body)),
    );
    expect(answers.map((a) => a.statusCode)).toEqual([202, 202, 202, 202, 202]);
    expect(new Set(answers.map((a) => a.json().data.inbox_id)).size).toBe(1);
    expect(answers.filter((a) => !a.json().data.duplicate)).toHaveLength(1);
    expect(await inboxRows(t, connection.id)).toBe(1);
  });

  it('a body past the replay window is stored again (its receipt has expired)', async () => {
    const connection = await genericConnection(t, companyId);
    const body = JSON.stringify(readings('2026-11-20T12:00:00Z'));
    const first = await pushGeneric(t, 'generic', connection.id, connection.secret, body);
    await t.pool.query(
      `UPDATE ingest_push_receipts SET received_at = received_at - interval '25 hours' WHERE connection_id = $1`,
      [connection.id],
    );
    const later = await pushGeneric(t, 'generic', connection.id, connection.secret, body);
    expect(later.json().data.duplicate).toBe(false);
    expect(later.json().data.inbox_id).not.toBe(first.json().data.inbox_id);
    // The expired receipt was replaced, not kept beside the new one.
    const { rows } = await t.pool.query(
      `SELECT count(*)::int AS n FROM ingest_push_receipts WHERE connection_id = $1`,
      [connection.id],
    );
    expect(rows[0].n).toBe(1);
  });

  it('generic with X-Signature-Timestamp: a fresh push is accepted, a replay of an old one refused (401, nothing stored)', async () => {
    const connection = await genericConnection(t, companyId);
    const body = JSON.stringify(readings('2026-11-20T13:00:00Z'));
    const send = (timestamp: number) =>
      t.app.inject({
        method: 'POST',
        url: `/ingest/v1/generic/${connection.id}`,
        headers: {
          'content-type': 'application/json',
          'x-signature-timestamp': String(timestamp),
          'x-signature': `sha256=${hmacHex('sha256', connection.secret, `${timestamp}.${body}`)}`,
        },
        payload: body,
      });
    const now = Math.floor(Date.now() / 1000);
    const stale = await send(now - 600);
    expect(stale.statusCode).toBe(401);
    expect(stale.json().error.message).toBe('signature timestamp is too old or in the future');
    expect(await inboxRows(t, connection.id)).toBe(0);
    expect((await send(now)).statusCode).toBe(202);
    expect(await inboxRows(t, connection.id)).toBe(1);
  });

  it('Motive: a replayed webhook (the signature covers the body only) is a duplicate', async () => {
    const secret = 'd9d36bea41c44ae49d1bfc4a48ba2abe';
    const connection = await createConnection(t, companyId, 'motive', { webhook_secret: secret });
    const body = fixture('motive', 'webhook.fault_code_opened.json');
    const send = () =>
      t.app.inject({
        method: 'POST',
        url: `/ingest/v1/motive/${connection.id}`,
        headers: { 'content-type': 'application/json', 'x-kt-webhook-signature': hmacHex('sha1', secret, body) },
        payload: body,
      });
    expect((await send()).json().data.duplicate).toBe(false);
    expect((await send()).json().data.duplicate).toBe(true);
    expect(await inboxRows(t, connection.id)).toBe(1);
  });

  it('Smartcar: a retry of an event (same eventId) is a duplicate; a signed delivery older than the window is refused', async () => {
    const token = 'smartcar-application-management-token';
    const connection = await createConnection(t, companyId, 'smartcar', { webhook_secret: token });
    const delivery = (deliveryId: string, deliveredAt: number) =>
      fixture('smartcar', 'webhook.vehicle_state.json')
        .replace('48b25f8f-9fea-42e1-9085-81043682cbb8', deliveryId)
        .replace('1746366013000', String(deliveredAt));
    const send = (body: string) =>
      t.app.inject({
        method: 'POST',
        url: `/ingest/v1/smartcar/${connection.id}`,
        headers: { 'content-type': 'application/json', 'sc-signature': hmacHex('sha256', token, body) },
        payload: body,
      });
    const first = await send(delivery('d-1', Date.now()));
    expect(first.json().data.duplicate).toBe(false);
    const retry = await send(delivery('d-2', Date.now() + 25_000));
    expect(retry.statusCode).toBe(202);
    expect(retry.json().data).toEqual({ ...first.json().data, duplicate: true });
    const captured = await send(delivery('d-3', Date.now() - 25 * 60 * 60 * 1000));
    expect(captured.statusCode).toBe(401);
    expect(await inboxRows(t, connection.id)).toBe(1);
  });

  it('Samsara: a replay inside its 5-minute signature window is a duplicate', async () => {
    const secret = Buffer.from('samsara-webhook-secret').toString('base64');
    const connection = await createConnection(t, companyId, 'samsara', { webhook_secret: secret });
    const body = fixture('samsara', 'webhook-engine-fault-on.json');
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = {
      'content-type': 'application/json',
      'x-samsara-timestamp': String(timestamp),
      'x-samsara-signature': `v1=${hmacHex('sha256', Buffer.from(secret, 'base64'), `v1:${timestamp}:${body}`)}`,
    };
    const send = () =>
      t.app.inject({ method: 'POST', url: `/ingest/v1/samsara/${connection.id}`, headers, payload: body });
    expect((await send()).json().data.duplicate).toBe(false);
    expect((await send()).json().data.duplicate).toBe(true);
    expect(await inboxRows(t, connection.id)).toBe(1);
  });

  it('Traccar: a repeated OsmAnd query is a new fix, never deduplicated', async () => {
    const connection = await createConnection(t, companyId, 'traccar');
    const url = `${new URL(connection.ingest_url!).pathname}?id=358240051111110&lat=41.85&lon=-87.65&speed=10`;
    expect((await t.app.inject({ method: 'GET', url })).statusCode).toBe(202);
    expect((await t.app.inject({ method: 'GET', url })).json().data.duplicate).toBe(false);
    expect(await inboxRows(t, connection.id)).toBe(2);
  });
});

describe('per-connection push rate limit', () => {
  let t: TestApp;
  let companyId: string;
  beforeAll(async () => {
    t = await createTestApp({ INGEST_RATE_LIMIT_PER_MINUTE: '3' });
    companyId = (await t.createCompany()).id;
  });
  afterAll(() => t.close());

  it('refuses one connection over its limit (429, Retry-After, envelope, nothing stored) while another keeps being accepted', async () => {
    const noisy = await genericConnection(t, companyId);
    const quiet = await genericConnection(t, companyId);
    const push = (connection: { id: string; secret: string }, minute: number) =>
      pushGeneric(t, 'generic', connection.id, connection.secret, readings(`2026-11-20T10:${minute}:00Z`));
    for (let minute = 10; minute < 13; minute++) expect((await push(noisy, minute)).statusCode).toBe(202);
    const refused = await push(noisy, 13);
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(refused.json()).toMatchObject({ success: false, error: { code: 'RATE_LIMITED' } });
    expect(await inboxRows(t, noisy.id)).toBe(3);

    // Pushes nobody can sign for do not spend a connection's allowance.
    for (let i = 0; i < 5; i++) {
      const unsigned = await t.app.inject({
        method: 'POST',
        url: `/ingest/v1/generic/${quiet.id}`,
        headers: { 'content-type': 'application/json', 'x-signature': `sha256=${'0'.repeat(64)}` },
        payload: '{"readings":[]}',
      });
      expect(unsigned.statusCode).toBe(401);
    }
    for (let minute = 10; minute < 13; minute++) expect((await push(quiet, minute)).statusCode).toBe(202);
    expect(await inboxRows(t, quiet.id)).toBe(3);

    // A second API process shares the count through Redis.
    const replica = await buildApp(t.deps);
    try {
      const elsewhere = await replica.inject({
        method: 'POST',
        url: `/ingest/v1/generic/${noisy.id}`,
        headers: {
          'content-type': 'application/json',
          'x-signature': `sha256=${hmacHex('sha256', noisy.secret, '{"readings":[]}')}`,
        },
        payload: '{"readings":[]}',
      });
      expect(elsewhere.statusCode).toBe(429);
    } finally {
      await replica.close();
    }
  });
});

describe('per-connection push rate limit without Redis', () => {
  let redis: ChildProcess;
  let t: TestApp;

  async function freePort(): Promise<number> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise((resolve) => server.close(resolve));
    return port;
  }

  async function listening(port: number): Promise<void> {
    for (let i = 0; i < 100; i++) {
      const up = await new Promise<boolean>((resolve) => {
        const socket = connect(port, '127.0.0.1', () => {
          socket.destroy();
          resolve(true);
        }).on('error', () => resolve(false));
      });
      if (up) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`redis-server on ${port} did not start`);
  }

  beforeAll(async () => {
    const port = await freePort();
    redis = spawn('redis-server', ['--port', String(port), '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    await listening(port);
    t = await createTestApp({
      REDIS_URL: `redis://127.0.0.1:${port}`,
      REDIS_CLUSTER: 'false',
      INGEST_RATE_LIMIT_PER_MINUTE: '1',
    });
  });
  afterAll(async () => {
    await t.close();
    if (redis.exitCode === null) redis.kill('SIGKILL');
  });

  it('fails open: with Redis gone, verified pushes are still stored', async () => {
    const { id } = await t.createCompany();
    const connection = await genericConnection(t, id);
    expect(
      (await pushGeneric(t, 'generic', connection.id, connection.secret, readings('2026-11-20T10:00:00Z'))).statusCode,
    ).toBe(202);
    expect(
      (await pushGeneric(t, 'generic', connection.id, connection.secret, readings('2026-11-20T10:01:00Z'))).statusCode,
    ).toBe(429);
    const exited = new Promise((resolve) => redis.once('exit', resolve));
    redis.kill('SIGKILL');
    await exited;
    const stored = await pushGeneric(t, 'generic', connection.id, connection.secret, readings('2026-11-20T10:02:00Z'));
    expect(stored.statusCode).toBe(202);
    expect(await inboxRows(t, connection.id)).toBe(2);
  });
});
