/**
 * The SDK (packages/sdk) against the real service over loopback: real Postgres, Redis, workers and
 * HTTP. Paging across pages, a typed 404, a webhook subscription's life with a real signed
 * delivery, a 429 whose Retry-After the retry honours, a paid call with its automatic
 * Idempotency-Key, and both webhook signatures as the service's own signer makes them.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createClient,
  NotFoundError,
  verifyCoreWebhook,
  verifyMonitoringWebhook,
  WebhookVerificationError,
  type FleetClient,
} from '../../packages/sdk/src/index.js';
import { signCoreBody, signMonitoringBody } from '../../src/delivery/sign.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

interface Exchange {
  method: string;
  url: string;
  headers: Headers;
  status: number;
  responseHeaders: Headers;
  at: number;
}

/** The global fetch, recording each exchange the SDK makes. */
function recordingFetch(exchanges: Exchange[]): typeof fetch {
  return async (input, init) => {
    const at = Date.now();
    const response = await fetch(input, init);
    exchanges.push({
      method: init?.method ?? 'GET',
      url: String(input),
      headers: new Headers(init?.headers),
      status: response.status,
      responseHeaders: response.headers,
      at,
    });
    return response;
  };
}

async function listen(t: TestApp): Promise<string> {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
}

function refusal(verify: () => unknown): string {
  try {
    verify();
    return 'accepted';
  } catch (err) {
    if (!(err instanceof WebhookVerificationError)) throw err;
    return err.reason;
  }
}

describe('the SDK against the service', () => {
  let t: TestApp;
  let receiver: Receiver;
  let client: FleetClient;
  let vin: string;
  const exchanges: Exchange[] = [];

  beforeAll(async () => {
    t = await createTestApp({ WEBHOOK_ALLOW_NETS: '127.0.0.1/32', WEBHOOK_TIMEOUT_MS: '2000' });
    await t.startWorkers(['webhooks']);
    receiver = await startReceiver();
    const company = await t.createCompany('SDK Fleet');
    for (let i = 0; i < 7; i++) vin = (await t.createVehicle(company.id, { name: `Van ${i}` })).vin;
    client = createClient({ baseUrl: await listen(t), apiKey: company.key, fetch: recordingFetch(exchanges) });
  });
  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });

  it('pages through vehicles: one page awaited, every vehicle iterated across pages', async () => {
    const page = await client.listVehicles({ limit: 3, include_total: true });
    expect(page.data).toHaveLength(3);
    expect(page.meta).toMatchObject({ limit: 3, offset: 0, total: 7 });

    exchanges.length = 0;
    const names: string[] = [];
    for await (const vehicle of client.listVehicles({ limit: 3 })) names.push(vehicle.name ?? '');
    expect(names.sort()).toEqual(['Van 0', 'Van 1', 'Van 2', 'Van 3', 'Van 4', 'Van 5', 'Van 6']);
    expect(exchanges.map((e) => new URL(e.url).searchParams.get('offset'))).toEqual([null, '3', '6']);
  });

  it('gets one vehicle, and a 404 as a typed error with the envelope and the request id', async () => {
    const [first] = (await client.listVehicles({ limit: 1 })).data;
    const vehicle = await client.getVehicle(first!.id);
    expect(vehicle).toMatchObject({ id: first!.id, vin });

    const error = await client.getVehicle('00000000-0000-4000-8000-000000000000').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error).toMatchObject({ status: 404, code: 'NOT_FOUND' });
    expect((error as NotFoundError).requestId).toBe(exchanges.at(-1)!.responseHeaders.get('x-request-id'));
    expect((error as NotFoundError).requestId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('creates a webhook subscription, verifies its signed test delivery, and deletes it', async () => {
    const created = await client.createWebhookSubscription({ url: `${receiver.url}/hooks`, events: ['run.created'] });
    expect(created.signing_secret).toMatch(/^whsec_/);
    await client.testWebhookSubscription(created.id);
    await expect.poll(() => receiver.received.length, { timeout: 15_000 }).toBe(1);
    const delivery = receiver.received[0]!;
    const header = delivery.headers['service-signature'] as string;
    expect(verifyCoreWebhook(created.signing_secret, header, delivery.rawBody)).toMatchObject({
      event: 'webhook.test',
    });
    const tampered = Buffer.from(delivery.rawBody.toString('utf8').replace('webhook.test', 'run.created'));
    expect(refusal(() => verifyCoreWebhook(created.signing_secret, header, tampered))).toBe('mismatch');
    const t0 = Number(/t=(\d+)/.exec(header)![1]);
    expect(
      refusal(() => verifyCoreWebhook(created.signing_secret, header, delivery.rawBody, { nowSec: t0 + 301 })),
    ).toBe('expired');

    expect((await client.listWebhookSubscriptions()).map((s) => s.id)).toContain(created.id);
    await client.deleteWebhookSubscription(created.id);
    const gone = await client.getWebhookSubscription(created.id).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(NotFoundError);
  });

  it('sends a paid call with an automatic Idempotency-Key; a retry with that key is a replay, billed once', async () => {
    exchanges.length = 0;
    const answer = await client.verifyVehicle({ vin });
    expect(answer.odometer).toBeDefined();
    const key = exchanges[0]!.headers.get('idempotency-key');
    expect(key).toMatch(/^[0-9a-f-]{36}$/);

    const again = await client.verifyVehicle({ vin }, { idempotencyKey: key! });
    expect(again).toEqual(answer);
    expect(exchanges[1]!.responseHeaders.get('idempotent-replayed')).toBe('true');
    const usage = await client.getUsage();
    expect(usage.products.find((p) => p.product === 'verification')?.quantity).toBe(1);
  });

  it("verifies webhooks signed by the service's own signer: valid, tampered, expired", () => {
    const secret = 'whsec_sdk_test';
    const body = Buffer.from(JSON.stringify({ event: 'run.created', event_id: 'e1', data: { id: 'r1' } }));
    const now = Math.floor(Date.now() / 1000);
    const header = signCoreBody(secret, body, now);
    expect(verifyCoreWebhook(secret, header, body)).toMatchObject({ event_id: 'e1' });
    expect(refusal(() => verifyCoreWebhook(secret, header, Buffer.concat([body, Buffer.from(' ')])))).toBe('mismatch');
    expect(refusal(() => verifyCoreWebhook(secret, signCoreBody(secret, body, now - 600), body))).toBe('expired');
    expect(
      refusal(() => verifyCoreWebhook(secret, signCoreBody(secret, body, now - 600), body, { toleranceSec: 900 })),
    ).toBe('accepted');

    const event = Buffer.from(JSON.stringify({ event: 'check_engine_light', event_id: 'm1' }));
    const signature = signMonitoringBody(secret, event);
    expect(verifyMonitoringWebhook(secret, signature, event)).toMatchObject({ event_id: 'm1' });
    expect(refusal(() => verifyMonitoringWebhook(secret, signature, event.toString('utf8').replace('m1', 'm2')))).toBe(
      'mismatch',
    );
    expect(refusal(() => verifyMonitoringWebhook('whsec_other', signature, event))).toBe('mismatch');
  });
});

describe('the SDK and the rate limit', () => {
  let t: TestApp;
  // The app's clock, moved so the test's requests fall just before a minute's window closes.
  let shiftMs = 0;

  beforeAll(async () => {
    t = await createTestApp({ RATE_LIMIT_PER_MINUTE: '2' }, () => new Date(Date.now() + shiftMs));
  });
  afterAll(() => t?.close());

  it('retries a 429 after its Retry-After and then succeeds, never sooner', async () => {
    const company = await t.createCompany('Limited');
    const exchanges: Exchange[] = [];
    const client = createClient({ baseUrl: await listen(t), apiKey: company.key, fetch: recordingFetch(exchanges) });
    const real = Date.now();
    shiftMs = 60_000 - (real % 60_000) - 2_500;

    await client.listVehicles();
    await client.listVehicles();
    const page = await client.listVehicles();
    expect(page.data).toEqual([]);

    expect(exchanges.map((e) => e.status)).toEqual([200, 200, 429, 200]);
    const retryAfter = Number(exchanges[2]!.responseHeaders.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(3);
    expect(exchanges[3]!.at - exchanges[2]!.at).toBeGreaterThanOrEqual(retryAfter * 1000);
  });
});
