/**
 * A paid PDF whose stream fails is not billed (docs/pricing.md): streamed without a key, the bill
 * written before the first byte is taken back; collected under an Idempotency-Key, the request
 * answers the JSON error envelope, bills nothing and releases the key. The failing stream stands
 * for the outside world (a renderer or socket failing mid-way), injected as the app's history PDF
 * renderer; the rest is the real app (authentication, routing, the paid-call flow) on the real
 * database, over HTTP.
 */
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import { createMetrics } from '../../src/metrics.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let server: FastifyInstance;
let url: string;
let company: { id: string; key: string };
const vin = '1HGCM82633A004352';

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

/** What the injected renderer streams next. */
let nextPdf: () => Readable = failingPdf;

async function ledgerCount(): Promise<number> {
  const result = await t.pool.query(`SELECT count(*)::int AS n FROM usage_ledger WHERE company_id = $1`, [company.id]);
  return result.rows[0].n;
}

/** A basic-tier history report as PDF, over HTTP with the company's key. */
function reportPdf(headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${company.key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ vin, tier: 'basic', format: 'pdf' }),
  });
}

beforeAll(async () => {
  t = await createTestApp();
  company = await t.createCompany('Streams');
  await t.createVehicle(company.id, { vin });
  server = await buildApp({
    ...t.deps,
    metrics: createMetrics('paid-call-stream'),
    renderHistoryPdf: async () => nextPdf(),
  });
  url = `${await server.listen({ port: 0, host: '127.0.0.1' })}/v1/history/report`;
});
afterAll(async () => {
  await server.close();
  await t.close();
});

describe('a failing PDF stream', () => {
  it('streamed without a key: the answer breaks off and the bill is taken back', async () => {
    // A stream that completes is billed once, before its first byte.
    nextPdf = () => Readable.from([Buffer.from('%PDF-1.7\n%%EOF\n')]);
    const ok = await reportPdf();
    expect(ok.headers.get('content-type')).toBe('application/pdf');
    expect(Buffer.from(await ok.arrayBuffer()).toString()).toBe('%PDF-1.7\n%%EOF\n');
    expect(await ledgerCount()).toBe(1);
    // The connection is cut before or after the 200 status line, depending on when the failure lands.
    nextPdf = failingPdf;
    await expect(reportPdf().then((response) => response.arrayBuffer())).rejects.toThrow();
    // The failed request's row was written before its first byte (so 2) and is deleted again.
    await expect.poll(ledgerCount, { timeout: 5000 }).toBe(1);
  });

  it('collected under a key: a JSON 500, nothing billed, the key released', async () => {
    nextPdf = failingPdf;
    const response = await reportPdf({ 'idempotency-key': 'k1' });
    expect(response.status).toBe(500);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('INTERNAL_ERROR');
    expect(await ledgerCount()).toBe(1);
    const keys = await t.pool.query(`SELECT count(*)::int AS n FROM idempotency_keys WHERE company_id = $1`, [
      company.id,
    ]);
    expect(keys.rows[0].n).toBe(0);
  });
});
