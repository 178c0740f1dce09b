/**
 * POST /v1/history/report over HTTP (docs/history-report.md): any company may ask for any known VIN (the
 * report names no owner), sections null outside the tier, JSON or PDF by `format` or Accept, the
 * PDF streamed and billed, an Idempotency-Key replaying the very PDF bytes, and refusals
 * (bad VIN naming its rule, unknown VIN) never billed.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let owner: { id: string; key: string };
let buyer: { id: string; key: string };
const vin = '1HGCM82633A004352';

function report(key: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return t.app.inject({
    method: 'POST',
    url: '/v1/history/report',
    headers: { authorization: `Bearer ${key}`, ...headers },
    payload: body,
  });
}

async function billed(companyId: string) {
  const result = await t.pool.query<{ tier: string }>(
    `SELECT tier FROM usage_ledger WHERE company_id = $1 AND product = 'history_report' ORDER BY id`,
    [companyId],
  );
  return result.rows.map((r) => r.tier);
}

function pdfText(bytes: Buffer): string {
  const dir = mkdtempSync(join(tmpdir(), 'report-'));
  const file = join(dir, 'report.pdf');
  writeFileSync(file, bytes);
  return execFileSync('pdftotext', [file, '-'], { encoding: 'utf8' });
}

beforeAll(async () => {
  t = await createTestApp();
  owner = await t.createCompany('Acme Rentals');
  buyer = await t.createCompany('Careful Buyer');
  const vehicle = await t.createVehicle(owner.id, { vin, make: 'Honda', model: 'Accord', year: 2003 });
  const entry = await t.admin('POST', `/vehicles/${vehicle.id}/service-entries`, {
    type: 'oil_change',
    performed_at: new Date(Date.now() - 30 * 86_400_000).toISOString(),
    odometer_miles: 42_000,
    notes: 'synthetic',
  });
  expect(entry.statusCode, entry.body).toBe(201);
});
afterAll(() => t.close());

describe('JSON', () => {
  it.each([
    ['basic', ['incidents', 'ownership', 'telematics', 'predictive_insights']],
    ['standard', ['telematics', 'predictive_insights']],
    ['comprehensive', ['predictive_insights']],
    ['lifetime', []],
  ])('%s: another company gets the report; sections outside the tier are null', async (tier, nullSections) => {
    const response = await report(buyer.key, { vin, tier });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    const data = response.json().data;
    expect(data).toMatchObject({ vin, tier, vehicle: { make: 'Honda', model: 'Accord', year: 2003 } });
    for (const section of ['incidents', 'ownership', 'telematics', 'predictive_insights']) {
      if (nullSections.includes(section)) expect(data[section], section).toBeNull();
      else expect(data[section], section).not.toBeNull();
    }
    expect(data.service_history).toEqual([expect.objectContaining({ type: 'oil_change', mileage: 42_000 })]);
    expect(response.body).not.toContain('Acme Rentals');
    expect(response.body).not.toContain(owner.id);
  });

  it('defaults to basic and bills each tier at its own price', async () => {
    const company = await t.createCompany('Tiers');
    await report(company.key, { vin });
    await report(company.key, { vin, tier: 'lifetime' });
    expect(await billed(company.id)).toEqual(['basic', 'lifetime']);
    const prices = await t.pool.query(
      `SELECT unit_price_micros::int AS p FROM usage_ledger WHERE company_id = $1 ORDER BY id`,
      [company.id],
    );
    expect(prices.rows.map((r) => r.p)).toEqual([5_000_000, 20_000_000]);
  });

  it('an Accept that prefers JSON gets JSON', async () => {
    const response = await report(buyer.key, { vin }, { accept: 'application/json, application/pdf' });
    expect(response.headers['content-type']).toMatch(/^application\/json/);
  });
});

describe('PDF', () => {
  it('format "pdf" answers application/pdf, a real PDF naming no owner, billed once', async () => {
    const company = await t.createCompany('Pdf by format');
    const response = await report(company.key, { vin, tier: 'standard', format: 'pdf' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('application/pdf');
    expect(response.rawPayload.subarray(0, 5).toString()).toBe('%PDF-');
    const text = pdfText(response.rawPayload);
    expect(text).toContain(vin);
    expect(text).not.toContain('Acme Rentals');
    expect(await billed(company.id)).toEqual(['standard']);
  });

  it('the OpenAPI document offers both answers', async () => {
    const doc = (await t.app.inject('/openapi.json')).json();
    const content = doc.paths['/v1/history/report'].post.responses['200'].content;
    expect(Object.keys(content).sort()).toEqual(['application/json', 'application/pdf']);
    expect(content['application/json'].schema.properties.data.properties.odometer_integrity).toBeDefined();
  });

  it('Accept: application/pdf answers a PDF too', async () => {
    const response = await report(buyer.key, { vin }, { accept: 'application/pdf' });
    expect(response.headers['content-type']).toBe('application/pdf');
    expect(response.rawPayload.subarray(0, 5).toString()).toBe('%PDF-');
  });

  it('with an Idempotency-Key a retry gets the very same bytes and is not billed again', async () => {
    const company = await t.createCompany('Pdf retry');
    const headers = { 'idempotency-key': 'pdf-1' };
    const first = await report(company.key, { vin, format: 'pdf' }, headers);
    const second = await report(company.key, { vin, format: 'pdf' }, headers);
    expect(first.statusCode).toBe(200);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.headers['content-type']).toBe('application/pdf');
    expect(Buffer.compare(first.rawPayload, second.rawPayload)).toBe(0);
    expect(await billed(company.id)).toEqual(['basic']);
    // The same key asking for JSON is another request.
    expect((await report(company.key, { vin }, headers)).statusCode).toBe(422);
  });
});

describe('refusals are never billed', () => {
  it('a VIN no vehicle has is 404', async () => {
    const company = await t.createCompany('Unknown VIN');
    const response = await report(company.key, { vin: 'KM8K2CAB4PU001140', format: 'pdf' });
    expect(response.statusCode).toBe(404);
    expect(response.json().error.code).toBe('NOT_FOUND');
    expect(await billed(company.id)).toEqual([]);
  });

  it.each([
    ['1HGCM82633A00435', 'length'],
    ['1HGCM82633A0O4352', 'alphabet'],
    ['1HGCM82633A123456', 'check_digit'],
  ])('VIN %s is 400 naming the %s rule', async (bad, rule) => {
    const company = await t.createCompany('Bad VIN');
    const response = await report(company.key, { vin: bad });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.details).toMatchObject({ rule, errors: [{ field: 'vin' }] });
    expect(await billed(company.id)).toEqual([]);
  });

  it('an unknown tier or format is 400; no key is 401', async () => {
    expect((await report(buyer.key, { vin, tier: 'gold' })).statusCode).toBe(400);
    expect((await report(buyer.key, { vin, format: 'xml' })).statusCode).toBe(400);
    expect((await report('nope', { vin })).statusCode).toBe(401);
  });
});
