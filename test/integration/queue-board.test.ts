import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminToken, createTestApp, type TestApp } from '../helpers/app.js';

const basic = (password: string) => `Basic ${Buffer.from(`operator:${password}`).toString('base64')}`;

describe('queue board (/admin/queues)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t?.close());

  it('asks a browser for the operator token and refuses a wrong one', async () => {
    for (const authorization of [undefined, basic('wrong'), 'Bearer wrong', basic('')]) {
      const res = await t.app.inject({
        url: '/admin/queues',
        headers: authorization ? { authorization } : {},
      });
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Basic realm="fleet operator"/);
      expect(res.json().error.code).toBe('UNAUTHORIZED');
    }
  });

  it('serves the board and every catalog queue with its counts to the operator', async () => {
    await t.queues.add('ingest.recover', {});
    const page = await t.app.inject({ url: '/admin/queues', headers: { authorization: basic(adminToken) } });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    const script = /src="(static\/js\/main\.[^"]+\.js)"/.exec(page.body)?.[1];
    expect(page.body).toContain('<base href="/admin/queues/"');
    const asset = await t.app.inject({
      url: `/admin/queues/${script}`,
      headers: { authorization: basic(adminToken) },
    });
    expect(asset.statusCode).toBe(200);

    const res = await t.app.inject({
      url: '/admin/queues/api/queues?activeQueue=ingest&status=waiting&page=1',
      headers: { authorization: `Bearer ${adminToken}` },
    });
    expect(res.statusCode).toBe(200);
    const queues = res.json().queues as Array<{ name: string; counts: Record<string, number> }>;
    expect(queues.map((q) => q.name).sort()).toEqual(['health', 'ingest', 'maintenance', 'pull', 'runs', 'webhooks']);
    expect(queues.find((q) => q.name === 'ingest')!.counts.waiting).toBe(1);
  });

  it('never answers 5xx to hostile requests on its own API, and leaves the queues as they were', async () => {
    const segments = ['ingest', 'nope', '%00', '..%2F..', 'x'.repeat(300), '00000000-0000-0000-0000-000000000000'];
    const paths = [
      'api/queues/:q/pause',
      'api/queues/:q/retry/failed',
      'api/queues/:q/clean/completed',
      'api/queues/:q/:q',
      'api/queues/:q/:q/logs',
      'api/queues/:q/concurrency',
      'api/queues/:q/:q/update-data',
    ];
    for (const path of paths) {
      for (const segment of segments.slice(1)) {
        for (const method of ['GET', 'PUT', 'PATCH'] as const) {
          const res = await t.app.inject({
            method,
            url: `/admin/queues/${path.replaceAll(':q', segment)}`,
            headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
            payload: method === 'GET' ? undefined : '{"concurrency":"x","jobData":[]}',
          });
          expect(res.statusCode, `${method} ${path} ${segment}`).toBeLessThan(500);
        }
      }
    }
    expect(await t.queues.queue('ingest').isPaused()).toBe(false);
  });

  it('is absent without an operator token configured', async () => {
    const bare = await createTestApp({ ADMIN_TOKEN: '' });
    try {
      const res = await bare.app.inject({ url: '/admin/queues', headers: { authorization: basic(adminToken) } });
      expect(res.statusCode).toBe(404);
    } finally {
      await bare.close();
    }
  });
});
