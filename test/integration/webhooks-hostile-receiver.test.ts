/**
 * Attempt records survive any receiver answer: a raw TCP receiver on 127.0.0.1 answers core
 * deliveries with bytes no well-behaved server sends (NUL, invalid UTF-8, binary, oversized and
 * broken headers). Every attempt is recorded, in the batch with the others, and reads back.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/db/pool.js';
import { relayWebhookEvents } from '../../src/db/webhooks.js';
import { coreDeliverer } from '../../src/webhooks/deliver-core.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

/** Raw HTTP/1.1 responses, each paired with what its attempt must record. */
const answers: Record<string, { raw: Buffer; errorCode: string | null; status: number | null }> = {
  nulBody: {
    raw: Buffer.concat([
      Buffer.from('HTTP/1.1 500 Boom\r\nConnection: close\r\nContent-Length: 9\r\n\r\n'),
      Buffer.from('a\0b\0c\0\0\0d'),
    ]),
    errorCode: 'http_status',
    status: 500,
  },
  invalidUtf8: {
    raw: Buffer.concat([
      Buffer.from('HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 10\r\n\r\n'),
      Buffer.from([0xff, 0xfe, 0xfd, 0xc3, 0x28, 0xa0, 0xa1, 0xe2, 0x28, 0xa1]),
    ]),
    errorCode: null,
    status: 200,
  },
  // 20 KB of random bytes (NUL among them) without a length: read up to the cap, then cut.
  binary: {
    raw: Buffer.concat([
      Buffer.from('HTTP/1.1 400 Bad\r\nContent-Type: application/octet-stream\r\n\r\n'),
      Buffer.alloc(64, 0),
      randomBytes(20_000),
    ]),
    errorCode: 'http_status',
    status: 400,
  },
  // Past Node's 16 KiB header limit: the client refuses to parse it.
  hugeHeader: {
    raw: Buffer.from(`HTTP/1.1 200 OK\r\nX-Junk: ${'A'.repeat(100_000)}\r\nContent-Length: 0\r\n\r\n`),
    errorCode: 'network_error',
    status: null,
  },
  // Under the limit, with bytes outside ASCII.
  bigLatin1Header: {
    raw: Buffer.concat([
      Buffer.from(`HTTP/1.1 204 No Content\r\nConnection: close\r\nX-Junk: ${'B'.repeat(12_000)}`),
      Buffer.from([0xff, 0xfe, 0x80]),
      Buffer.from('\r\n\r\n'),
    ]),
    errorCode: null,
    status: 204,
  },
  // A redirect whose Location carries high bytes: its text goes into error_message.
  oddLocation: {
    raw: Buffer.concat([
      Buffer.from('HTTP/1.1 302 Found\r\nConnection: close\r\nLocation: /next'),
      Buffer.from([0xc3, 0x28, 0xff]),
      Buffer.from('\r\nContent-Length: 0\r\n\r\n'),
    ]),
    errorCode: 'redirect',
    status: 302,
  },
  // A NUL inside a header value: not HTTP any more.
  nulHeader: {
    raw: Buffer.concat([
      Buffer.from('HTTP/1.1 200 OK\r\nX-Evil: a'),
      Buffer.from([0]),
      Buffer.from('b\r\nContent-Length: 0\r\n\r\n'),
    ]),
    errorCode: 'network_error',
    status: null,
  },
};
const variants = Object.keys(answers);

let t: TestApp;
let server: Server;
let port: number;
/** event_id → the variant it was answered with. */
const answeredWith = new Map<string, string>();

/** One request per connection (every answer closes it), so a pooled socket never carries a second one. */
function serve(socket: Socket): void {
  let buffered = Buffer.alloc(0);
  socket.on('data', function read(chunk: Buffer) {
    buffered = Buffer.concat([buffered, chunk]);
    const headerEnd = buffered.indexOf('\r\n\r\n');
    if (headerEnd < 0) return;
    const length = Number(/content-length: (\d+)/i.exec(buffered.subarray(0, headerEnd).toString('latin1'))?.[1]);
    const body = buffered.subarray(headerEnd + 4);
    if (body.length < length) return;
    const eventId = JSON.parse(body.toString('utf8')).event_id as string;
    const variant = variants[answeredWith.size % variants.length]!;
    answeredWith.set(eventId, variant);
    socket.off('data', read);
    socket.end(answers[variant]!.raw);
  });
  socket.on('error', () => undefined);
}

beforeAll(async () => {
  t = await createTestApp({ WEBHOOK_ALLOW_NETS: '127.0.0.1/32' });
  server = createServer(serve);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await t.close();
});

describe('a receiver that answers garbage', () => {
  it('gets every attempt recorded, whatever it sent, and the tenant reads them back', async () => {
    const company = await t.createCompany('Hostile Receiver Co');
    const subscription = (
      await t.api('POST', '/webhook-subscriptions', company.key, {
        url: `http://127.0.0.1:${port}/hook`,
        events: ['run.created'],
      })
    ).json().data;
    // Two rounds of every variant, recorded together by one lane turn.
    for (let i = 0; i < 2 * variants.length; i++) {
      const vehicle = await t.createVehicle(company.id);
      const opened = await t.admin('POST', `/companies/${company.id}/service-requests`, {
        vehicle_id: vehicle.id,
        items: [{ title: 'Oil change', type: 'oil_change' }],
      });
      expect(opened.statusCode).toBe(201);
    }
    await withTransaction(t.pool, (tx) => relayWebhookEvents(tx, 100));
    const deliverLane = coreDeliverer({
      pool: t.pool,
      queues: t.queues,
      log: { warn: () => undefined },
      secretsKey: t.config.secretsKey,
      timeoutMs: 3000,
      allowNets: ['127.0.0.1/32'],
      now: () => new Date(),
    });
    const turn = await deliverLane({ subscriptionId: subscription.id, companyId: company.id });
    expect(turn.outcomes).toHaveLength(2 * variants.length);
    expect(answeredWith.size).toBe(2 * variants.length);

    const response = await t.api('GET', `/webhook-subscriptions/${subscription.id}/deliveries?limit=50`, company.key);
    expect(response.statusCode).toBe(200);
    const deliveries = response.json().data as Array<any>;
    expect(deliveries).toHaveLength(2 * variants.length);
    for (const delivery of deliveries) {
      const variant = answeredWith.get(delivery.event_id)!;
      const expected = answers[variant]!;
      expect(delivery, variant).toMatchObject({
        status: expected.errorCode === null ? 'succeeded' : 'failed',
        attempts: [{ attempt_number: 1, error_code: expected.errorCode, response_status: expected.status }],
      });
      const [attempt] = delivery.attempts;
      for (const text of [attempt.response_excerpt, attempt.error_message]) {
        if (text !== null) expect(text, variant).not.toContain('\u0000');
      }
    }
    const byVariant = (name: string) => deliveries.find((d) => answeredWith.get(d.event_id) === name).attempts[0];
    expect(byVariant('nulBody').response_excerpt).toBe('abcd');
    expect(byVariant('invalidUtf8').response_excerpt).toContain('\uFFFD');
    expect(byVariant('binary')).toMatchObject({ response_truncated: true });
    expect(byVariant('oddLocation').error_message).toMatch(/^redirects are not followed \(HTTP 302 to \/next/);
  });
});
