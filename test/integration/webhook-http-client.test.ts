/**
 * deliverOnce against real HTTP servers on 127.0.0.1: outcomes, the deadline, the response cap,
 * redirects and the SSRF guard (docs/webhooks.md "Sources"). Loopback is reachable only because
 * each test opens 127.0.0.1/32 explicitly, as WEBHOOK_ALLOW_NETS would.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { deliverOnce, ssrfRefusalMessage, type DeliveryOptions, type DeliveryRequest } from '../../src/http/client.js';
import { signCoreBody } from '../../src/delivery/sign.js';
import { verifyServiceSignature } from '../../packages/sdk/src/signatures.js';

interface Seen {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

interface Receiver {
  server: Server;
  port: number;
  base: string;
  requests: Seen[];
  connections: number;
}

const servers: Server[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

async function receiver(handler: (req: IncomingMessage, res: ServerResponse, seen: Seen) => void): Promise<Receiver> {
  const state: Receiver = { server: undefined as unknown as Server, port: 0, base: '', requests: [], connections: 0 };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const seen = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) };
      state.requests.push(seen);
      handler(req, res, seen);
    });
  });
  server.on('connection', () => {
    state.connections += 1;
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  state.server = server;
  state.port = (server.address() as AddressInfo).port;
  state.base = `http://127.0.0.1:${state.port}`;
  return state;
}

const loopback: DeliveryOptions = { timeoutMs: 3_000, allowNets: ['127.0.0.1/32'], allowHttp: () => true };
const body = Buffer.from('{"event":"run.created","event_id":"evt_1","data":{"title":"Ölwechsel"}}');

function post(url: string, extraHeaders: Record<string, string> = {}): DeliveryRequest {
  return { url, body, headers: { 'content-type': 'application/json', ...extraHeaders } };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('deliverOnce: outcomes', () => {
  it('delivers a 2xx: ok, status, excerpt, resolved IP, and the receiver gets exactly the signed bytes', async () => {
    const r = await receiver((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('thanks ✓'));
    const t = 1_795_000_000;
    const signature = signCoreBody('whsec_x', body, t);
    const result = await deliverOnce(post(`${r.base}/hooks/core?x=1`, { 'service-signature': signature }), loopback);
    expect(result).toMatchObject({
      ok: true,
      status: 200,
      responseExcerpt: 'thanks ✓',
      responseTruncated: false,
      errorCode: null,
      errorMessage: null,
      resolvedIp: '127.0.0.1',
    });
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
    expect(r.requests).toHaveLength(1);
    const seen = r.requests[0]!;
    expect(seen.method).toBe('POST');
    expect(seen.path).toBe('/hooks/core?x=1');
    expect(seen.body.equals(body)).toBe(true);
    expect(seen.headers['content-length']).toBe(String(body.length));
    expect(seen.headers['content-type']).toBe('application/json');
    expect(
      verifyServiceSignature(seen.headers['service-signature'] as string, seen.body, 'whsec_x', { nowSeconds: t }),
    ).toEqual({ ok: true, timestamp: t });
  });

  it('reports a 500 as http_status with the status and body kept', async () => {
    const r = await receiver((_req, res) => res.writeHead(500).end('boom'));
    const result = await deliverOnce(post(`${r.base}/`), loopback);
    expect(result).toMatchObject({
      ok: false,
      status: 500,
      errorCode: 'http_status',
      responseExcerpt: 'boom',
      responseTruncated: false,
    });
    expect(result.errorMessage).toContain('500');
  });

  it('reports a 404 with an empty body as http_status and an empty excerpt', async () => {
    const r = await receiver((_req, res) => res.writeHead(404).end());
    expect(await deliverOnce(post(`${r.base}/`), loopback)).toMatchObject({
      ok: false,
      status: 404,
      errorCode: 'http_status',
      responseExcerpt: '',
    });
  });

  it('never follows a redirect: 302 is a failure and the target is never requested', async () => {
    const r = await receiver((_req, res) => {
      if (_req.url === '/a') res.writeHead(302, { location: '/b' }).end('moved');
      else res.writeHead(200).end('should not be reached');
    });
    const result = await deliverOnce(post(`${r.base}/a`), loopback);
    expect(result).toMatchObject({ ok: false, status: 302, errorCode: 'redirect', responseExcerpt: 'moved' });
    expect(result.errorMessage).toContain('/b');
    await pause(100);
    expect(r.requests.map((seen) => seen.path)).toEqual(['/a']);
  });

  it('treats a 308 the same way', async () => {
    const r = await receiver((_req, res) =>
      res.writeHead(308, { location: 'http://169.254.169.254/latest/meta-data/' }).end(),
    );
    expect(await deliverOnce(post(`${r.base}/a`), loopback)).toMatchObject({
      ok: false,
      status: 308,
      errorCode: 'redirect',
    });
  });

  it('gives up at the deadline when the receiver answers after 2 s', async () => {
    const r = await receiver((_req, res) => {
      setTimeout(() => (res.destroyed ? undefined : res.writeHead(200).end('late')), 2_000);
    });
    const result = await deliverOnce(post(`${r.base}/slow`), { ...loopback, timeoutMs: 300 });
    expect(result).toMatchObject({ ok: false, status: null, errorCode: 'timeout', responseExcerpt: null });
    expect(result.durationMs).toBeGreaterThanOrEqual(280);
    expect(result.durationMs).toBeLessThanOrEqual(1_000);
  });

  it('counts the body against the deadline: headers on time, body too slow → timeout with the status kept', async () => {
    const r = await receiver((_req, res) => {
      res.writeHead(200);
      res.write('partial');
      setTimeout(() => (res.destroyed ? undefined : res.end('rest')), 2_000);
    });
    const result = await deliverOnce(post(`${r.base}/`), { ...loopback, timeoutMs: 300 });
    expect(result).toMatchObject({ ok: false, status: 200, errorCode: 'timeout', responseExcerpt: 'partial' });
    expect(result.durationMs).toBeLessThanOrEqual(1_000);
  });

  it('reports a closed port as connection_refused', async () => {
    const r = await receiver(() => {});
    const { port } = r;
    await new Promise<void>((resolve) => r.server.close(() => resolve()));
    servers.splice(servers.indexOf(r.server), 1);
    const result = await deliverOnce(post(`http://127.0.0.1:${port}/`), loopback);
    expect(result).toMatchObject({ ok: false, status: null, errorCode: 'connection_refused', resolvedIp: '127.0.0.1' });
    // The tenant reads the message: the address dialled is cut out (it may be a private one from WEBHOOK_ALLOW_NETS).
    expect(result.errorMessage).toBe('connect ECONNREFUSED <address>');
  });

  it('reports a connection dropped by the receiver as connection_reset', async () => {
    const r = await receiver((req) => req.socket.destroy());
    expect(await deliverOnce(post(`${r.base}/`), loopback)).toMatchObject({
      ok: false,
      status: null,
      errorCode: 'connection_reset',
    });
  });

  it('reads at most 16 KiB of a 5 MB response and stops', async () => {
    const chunk = Buffer.alloc(64 * 1024, 'a');
    const r = await receiver((_req, res) => {
      res.writeHead(200, { 'content-length': String(80 * chunk.length) });
      for (let i = 0; i < 80; i += 1) res.write(chunk);
      res.end();
    });
    const result = await deliverOnce(post(`${r.base}/big`), loopback);
    expect(result.ok).toBe(true);
    expect(result.status).toBe(200);
    expect(result.responseTruncated).toBe(true);
    expect(Buffer.byteLength(result.responseExcerpt ?? '', 'utf8')).toBeLessThanOrEqual(16_384);
    expect(result.responseExcerpt).toBe('a'.repeat(16_384));
  });

  it('honours maxResponseBytes and never splits a UTF-8 character', async () => {
    const r = await receiver((_req, res) => res.writeHead(200).end('ab€cd')); // € is 3 bytes
    const result = await deliverOnce(post(`${r.base}/`), { ...loopback, maxResponseBytes: 4 });
    expect(result).toMatchObject({ ok: true, responseTruncated: true, responseExcerpt: 'ab' });
    const exact = await deliverOnce(post(`${r.base}/`), { ...loopback, maxResponseBytes: 7 });
    expect(exact).toMatchObject({ ok: true, responseTruncated: false, responseExcerpt: 'ab€cd' });
  });

  it('reuses a keep-alive socket for consecutive deliveries to one receiver', async () => {
    const r = await receiver((_req, res) => res.writeHead(204).end());
    for (let i = 0; i < 3; i += 1) expect((await deliverOnce(post(`${r.base}/`), loopback)).ok).toBe(true);
    expect(r.requests).toHaveLength(3);
    expect(r.connections).toBe(1);
  });

  it('checks a pooled socket against the current allow list before writing to it', async () => {
    const r = await receiver((_req, res) => res.writeHead(200).end('ok'));
    const url = `http://pool.test:${r.port}/`;
    let lookups = 0;
    const resolve = async () => {
      lookups += 1;
      return [{ address: '127.0.0.1', family: 4 as const }];
    };
    expect((await deliverOnce(post(url), { ...loopback, resolve })).ok).toBe(true);
    // Same host and port: the pooled socket is offered again (no new lookup), but this call does not allow loopback.
    const result = await deliverOnce(post(url), { ...loopback, allowNets: [], resolve });
    expect(result).toMatchObject({ ok: false, errorCode: 'ssrf_blocked', resolvedIp: '127.0.0.1' });
    expect(lookups).toBe(1);
    await pause(50);
    expect(r.requests).toHaveLength(1);
  });
});

describe('deliverOnce: SSRF guard', () => {
  it('refuses 127.0.0.1 without an allow list and never connects', async () => {
    const r = await receiver((_req, res) => res.writeHead(200).end());
    const result = await deliverOnce(post(`${r.base}/`), { timeoutMs: 3_000, allowNets: [], allowHttp: () => true });
    expect(result).toMatchObject({
      ok: false,
      status: null,
      errorCode: 'ssrf_blocked',
      errorMessage: ssrfRefusalMessage,
      resolvedIp: '127.0.0.1',
      refusedReason: 'loopback',
    });
    await pause(50);
    expect(r.connections).toBe(0);
    expect(r.requests).toHaveLength(0);
  });

  it('refuses IPv6 and mapped literals', async () => {
    const options = { timeoutMs: 3_000, allowNets: [] };
    expect(await deliverOnce(post('https://[::1]/'), options)).toMatchObject({
      errorCode: 'ssrf_blocked',
      resolvedIp: '::1',
    });
    const mapped = await deliverOnce(post('https://[::ffff:127.0.0.1]/'), options);
    expect(mapped).toMatchObject({
      errorCode: 'ssrf_blocked',
      errorMessage: ssrfRefusalMessage,
      refusedReason: 'ipv4_mapped:loopback',
    });
    // WHATWG URL canonicalises odd IPv4 spellings, so they are judged as what they are.
    const hex = await deliverOnce(post('https://0x7f.1/'), options);
    expect(hex).toMatchObject({ errorCode: 'ssrf_blocked', resolvedIp: '127.0.0.1' });
  });

  it.each([
    ['10.0.0.5', 4, 'private'],
    ['169.254.169.254', 4, 'metadata'],
    ['::ffff:127.0.0.1', 6, 'ipv4_mapped:loopback'],
  ] as const)(
    'refuses a hostname that resolves to %s; the message names neither address nor range',
    async (address, family, reason) => {
      const asked: string[] = [];
      const result = await deliverOnce(post('https://hooks.example.com/hook'), {
        timeoutMs: 3_000,
        allowNets: [],
        resolve: async (hostname) => {
          asked.push(hostname);
          return [{ address, family }];
        },
      });
      expect(result).toMatchObject({
        ok: false,
        status: null,
        errorCode: 'ssrf_blocked',
        errorMessage: ssrfRefusalMessage,
        resolvedIp: address,
        refusedReason: reason,
      });
      expect(asked).toEqual(['hooks.example.com']);
    },
  );

  it('resolves hostnames through the injected resolver, once, and dials the address it returned', async () => {
    const r = await receiver((_req, res) => res.writeHead(200).end('ok'));
    const asked: string[] = [];
    const result = await deliverOnce(post(`http://receiver.test:${r.port}/in`), {
      ...loopback,
      resolve: async (hostname) => {
        asked.push(hostname);
        return [{ address: '127.0.0.1', family: 4 }];
      },
    });
    expect(result).toMatchObject({ ok: true, status: 200, resolvedIp: '127.0.0.1' });
    expect(asked).toEqual(['receiver.test']);
    expect(r.requests[0]!.headers.host).toBe(`receiver.test:${r.port}`);
  });

  it('skips blocked addresses in a mixed answer and dials only one that passed', async () => {
    const r = await receiver((_req, res) => res.writeHead(200).end());
    const result = await deliverOnce(post(`http://mixed.test:${r.port}/`), {
      ...loopback,
      resolve: async () => [
        { address: '10.0.0.5', family: 4 },
        { address: '127.0.0.1', family: 4 },
      ],
    });
    expect(result).toMatchObject({ ok: true, resolvedIp: '127.0.0.1' });
  });

  it('sends the default resolver through the guard too (localhost is refused)', async () => {
    const result = await deliverOnce(post('https://localhost/'), { timeoutMs: 3_000, allowNets: [] });
    expect(result).toMatchObject({ ok: false, errorCode: 'ssrf_blocked', errorMessage: ssrfRefusalMessage });
    expect(result.refusedReason).toMatch(/loopback/);
  });

  it('maps resolver failures and empty answers to dns_error', async () => {
    const notFound = Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.test'), { code: 'ENOTFOUND' });
    expect(
      await deliverOnce(post('https://nowhere.test/'), {
        timeoutMs: 3_000,
        allowNets: [],
        resolve: () => Promise.reject(notFound),
      }),
    ).toMatchObject({
      ok: false,
      errorCode: 'dns_error',
      errorMessage: 'getaddrinfo ENOTFOUND nowhere.test',
      resolvedIp: null,
    });
    expect(
      await deliverOnce(post('https://empty.test/'), { timeoutMs: 3_000, allowNets: [], resolve: async () => [] }),
    ).toMatchObject({
      ok: false,
      errorCode: 'dns_error',
    });
  });

  it('counts DNS against the deadline', async () => {
    const result = await deliverOnce(post('https://hang.test/'), {
      timeoutMs: 200,
      allowNets: [],
      resolve: () => new Promise(() => {}),
    });
    expect(result).toMatchObject({ ok: false, errorCode: 'timeout' });
    expect(result.durationMs).toBeLessThan(1_000);
  });
});

describe('deliverOnce: URLs and TLS', () => {
  it('reports https to a plain-http server as a failure, not a throw', async () => {
    const r = await receiver((_req, res) => res.writeHead(200).end());
    const result = await deliverOnce(post(`https://127.0.0.1:${r.port}/`), loopback);
    expect(result.ok).toBe(false);
    expect(result.status).toBeNull();
    expect(['tls_error', 'network_error']).toContain(result.errorCode);
  });

  it('refuses plain http unless allowHttp says yes, without connecting', async () => {
    const r = await receiver((_req, res) => res.writeHead(200).end());
    const result = await deliverOnce(post(`${r.base}/`), { timeoutMs: 3_000, allowNets: ['127.0.0.1/32'] });
    expect(result).toMatchObject({ ok: false, errorCode: 'invalid_url', status: null, resolvedIp: null });
    const refused = await deliverOnce(post(`${r.base}/`), { ...loopback, allowHttp: () => false });
    expect(refused.errorCode).toBe('invalid_url');
    await pause(50);
    expect(r.connections).toBe(0);
  });

  it.each([
    'not a url',
    '',
    '/relative/path',
    'ftp://hooks.example.com/x',
    'file:///etc/passwd',
    'javascript:alert(1)',
    'ws://hooks.example.com/',
    'https://user:pass@hooks.example.com/',
    'https://user@hooks.example.com/',
    'https://:pass@hooks.example.com/',
    'https://[::1/',
  ])('refuses %j as invalid_url', async (url) => {
    const result = await deliverOnce(post(url), { timeoutMs: 3_000, allowNets: ['0.0.0.0/0'], allowHttp: () => true });
    expect(result).toMatchObject({ ok: false, status: null, errorCode: 'invalid_url', responseExcerpt: null });
    expect(result.errorMessage).not.toContain('pass');
  });

  it('does not throw on a header Node refuses to send', async () => {
    const r = await receiver((_req, res) => res.writeHead(200).end());
    const result = await deliverOnce(post(`${r.base}/`, { 'x-bad': 'line\r\nInjected: 1' }), loopback);
    expect(result).toMatchObject({ ok: false, errorCode: 'network_error' });
    expect(result.errorMessage).not.toContain('Injected');
    expect(r.requests).toHaveLength(0);
  });
});
