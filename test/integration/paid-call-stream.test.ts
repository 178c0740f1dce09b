/**
 * A paid PDF whose stream fails is not billed (docs/pricing.md): streamed without a key, the bill
 * written before the first byte is taken back; collected under an Idempotency-Key, the request
 * answers the JSON error envelope, bills nothing and releases the key. The failing stream stands
 * for the outside world (a renderer or socket failing mid-way); the rest is the real paid-call flow
 * on the real database.
 */
import { Readable } from 'node:stream';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installErrorHandlers } from '../../src/api/error-handler.js';
import { answerPaidCall } from '../../src/api/paid-call.js';
import { createLogger } from '../../src/log.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let server: FastifyInstance;
let url: string;
let companyId: string;

/** One chunk of PDF, then a failure. */
function failingPdf(): Readable {
  let sent = false;
  return new Readable({
    read() {
      if (sent) {
        this.destroy(new Error('renderer failed'));
        return;
      }
      sent = true;
      this.push(Buffer.from('%PDF-1.7\n'.padEnd(70_000, '%')));
    },
  });
}

async function ledgerCount(): Promise<number> {
  const result = await t.pool.query(`SELECT count(*)::int AS n FROM usage_ledger WHERE company_id = $1`, [companyId]);
  return result.rows[0].n;
}

beforeAll(async () => {
  t = await createTestApp();
  companyId = (await t.createCompany('Streams')).id;
  server = Fastify();
  installErrorHandlers(server);
  server.addHook('onRequest', async (request) => {
    request.principal = { keyId: 'k', companyId };
  });
  for (const [path, stream] of [
    ['/paid', failingPdf],
    ['/paid-ok', () => Readable.from([Buffer.from('%PDF-1.7\n%%EOF\n')])],
  ] as const) {
    server.post(path, async (request, reply) =>
      answerPaidCall({ pool: t.pool, log: createLogger('silent'), now: () => new Date() }, request, reply, {
        product: 'history_report',
        tier: 'basic',
        fingerprint: {},
        work: async () => ({ kind: 'pdf', stream: stream() }),
      }),
    );
  }
  url = `${await server.listen({ port: 0, host: '127.0.0.1' })}/paid`;
});
afterAll(async () => {
  await server.close();
  await t.close();
});

describe('a failing PDF stream', () => {
  it('streamed without a key: the answer breaks off and the bill is taken back', async () => {
    // A stream that completes is billed once, before its first byte.
    const ok = await fetch(`${url}-ok`, { method: 'POST' });
    expect(ok.headers.get('content-type')).toBe('application/pdf');
    expect(Buffer.from(await ok.arrayBuffer()).toString()).toBe('%PDF-1.7\n%%EOF\n');
    expect(await ledgerCount()).toBe(1);
    // The connection is cut before or after the 200 status line, depending on when the failure lands.
    await expect(fetch(url, { method: 'POST' }).then((response) => response.arrayBuffer())).rejects.toThrow();
    // The failed request's row was written before its first byte (so 2) and is deleted again.
    await expect.poll(ledgerCount, { timeout: 5000 }).toBe(1);
  });

  it('collected under a key: a JSON 500, nothing billed, the key released', async () => {
    const response = await fetch(url, { method: 'POST', headers: { 'idempotency-key': 'k1' } });
    expect(response.status).toBe(500);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('INTERNAL_ERROR');
    expect(await ledgerCount()).toBe(1);
    const keys = await t.pool.query(`SELECT count(*)::int AS n FROM idempotency_keys WHERE company_id = $1`, [
      companyId,
    ]);
    expect(keys.rows[0].n).toBe(0);
  });
});
