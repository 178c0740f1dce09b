/**
 * One webhook POST, guarded and bounded (docs/webhooks.md, docs/webhooks.md "Sources"):
 * - SSRF: the address is checked inside the socket's `lookup`, and the address returned there is
 *   the one dialled, so a second DNS answer cannot swap in 127.0.0.1 (no rebinding window). IP
 *   literals skip `lookup` in Node, so they are checked before the request; every socket, fresh
 *   or reused from the keep-alive pool, is checked again on its remote address before a byte of
 *   the request is written.
 * - Redirects are reported, never followed: following one is the classic SSRF bypass.
 * - One deadline covers DNS, connect, TLS, request, response headers and body.
 * - At most `maxResponseBytes` of the response are read; an endless body cannot stall or bloat the worker.
 * - What the tenant reads (excerpt, error message) is storable whatever the receiver sent (no NUL,
 *   well-formed text) and names no address: a refusal never tells which private address a name
 *   resolved to, and socket errors have their addresses cut out. Operators get the address and
 *   the guard's reason in `resolvedIp` and `refusedReason`.
 * Never throws and never logs: the headers carry signatures, so only the caller decides what is recorded.
 * Uses node:http rather than fetch because fetch cannot take an Agent or a per-socket lookup.
 */
import { promises as dns, type LookupAddress, type LookupOptions } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { StringDecoder } from 'node:string_decoder';
import { blockedReason } from './ssrf.js';

export interface DeliveryRequest {
  url: string;
  /** Default POST (webhooks); provider pulls also GET. */
  method?: 'GET' | 'POST';
  /** Sent as is: the bytes that were signed. */
  body: Buffer;
  /** Content-Type and signature headers are the caller's; Content-Length is added when missing. */
  headers: Record<string, string>;
}

export type ResolvedAddress = { address: string; family: 4 | 6 };

export interface DeliveryOptions {
  /** The one deadline of the whole attempt (WEBHOOK_TIMEOUT_MS). */
  timeoutMs: number;
  /** CIDRs the SSRF guard lets through (WEBHOOK_ALLOW_NETS). */
  allowNets: readonly string[];
  /** Response bytes read at most; default 16384. */
  maxResponseBytes?: number;
  /** Hostname → addresses; default `dns.promises.lookup(host, { all: true })`. */
  resolve?: (hostname: string) => Promise<ResolvedAddress[]>;
  /** Whether an http:// URL may be used (the caller allows it for WEBHOOK_ALLOW_NETS targets); default never. */
  allowHttp?: (url: URL) => boolean;
}

export type DeliveryErrorCode =
  | 'timeout'
  | 'dns_error'
  | 'connection_refused'
  | 'connection_reset'
  | 'tls_error'
  | 'ssrf_blocked'
  | 'redirect'
  | 'invalid_url'
  | 'http_status'
  | 'network_error';

export interface DeliveryResult {
  /** True for a 2xx whose response was read (up to the cap) within the deadline; nothing else. */
  ok: boolean;
  /** The response status, kept whenever one arrived (also on redirect, timeout in the body, cut connection). */
  status: number | null;
  durationMs: number;
  /** The response body read so far as UTF-8; null when no response arrived. */
  responseExcerpt: string | null;
  /** The response headers; null when no response arrived. */
  responseHeaders: http.IncomingHttpHeaders | null;
  responseTruncated: boolean;
  errorCode: DeliveryErrorCode | null;
  errorMessage: string | null;
  /** The address connected to, or the address refused by the SSRF guard; null before resolution. For operators only. */
  resolvedIp: string | null;
  /** Why the SSRF guard refused `resolvedIp` (e.g. `private`, `metadata`); null unless ssrf_blocked. For operators only. */
  refusedReason: string | null;
}

/** The tenant-visible message of every SSRF refusal: it never names the address or its range. */
export const ssrfRefusalMessage = 'the host resolves to a private or reserved address; nothing was sent';

const defaultMaxResponseBytes = 16_384;
const maxErrorMessageLength = 500;

/*
 * Keep-alive pools so deliveries to one receiver reuse sockets. A pooled socket is idle for at
 * most 4 s (less if the server's Keep-Alive header says so: Node honours the hint), below the
 * 5 s default of Node servers, so we rarely write into a socket the receiver is closing; a core
 * delivery is never retried, and a reset on a stale socket would be a lost event.
 * Pooled sockets are unref'd by the Agent and do not hold the process open.
 */
const agentOptions = { keepAlive: true, timeout: 4_000, scheduling: 'lifo', maxFreeSockets: 2048 } as const;
const httpAgent = new http.Agent(agentOptions);
const httpsAgent = new https.Agent(agentOptions);

function defaultResolve(hostname: string): Promise<ResolvedAddress[]> {
  return dns
    .lookup(hostname, { all: true, verbatim: true })
    .then((addresses: LookupAddress[]) =>
      addresses.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 })),
    );
}

const tlsErrorCode = /^(ERR_SSL_|ERR_TLS_)|CERT|^EPROTO$/;

function classify(error: unknown): DeliveryErrorCode {
  const code = (error as NodeJS.ErrnoException | null)?.code ?? '';
  if (code === 'ECONNREFUSED') return 'connection_refused';
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'connection_reset';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_FAIL' || code === 'ENODATA') return 'dns_error';
  if (tlsErrorCode.test(code) || (error as { library?: unknown } | null)?.library === 'SSL routines')
    return 'tls_error';
  return 'network_error';
}

function messageOf(error: unknown): string {
  const text = withoutAddresses((error instanceof Error ? error.message : String(error)).trim());
  return text.length > maxErrorMessageLength ? `${text.slice(0, maxErrorMessageLength)}…` : text;
}

/**
 * Socket and TLS errors name the address dialled ("connect ECONNREFUSED 10.0.0.7:443", "IP:
 * 10.0.0.7 is not in the cert's list"); that may be a private address opened by
 * WEBHOOK_ALLOW_NETS, and the tenant reads these messages.
 */
function withoutAddresses(text: string): string {
  return text
    .split(' ')
    .map((word) => (isAddress(word) ? '<address>' : word))
    .join(' ');
}

function isAddress(word: string): boolean {
  if (isIP(word) !== 0) return true;
  const colon = word.lastIndexOf(':');
  if (colon <= 0 || !/^\d{1,5}$/.test(word.slice(colon + 1))) return false;
  const host = word.slice(0, colon);
  return isIP(host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host) !== 0;
}

// Lone UTF-16 surrogates (no valid pair); Postgres text cannot hold them, nor U+0000.
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Text Postgres can store: NUL removed, lone surrogates replaced. A receiver controls the body
 * and some headers; one unstorable attempt would fail the whole batch of records.
 */
export function storableText(text: string): string {
  return text.replaceAll('\u0000', '').replace(loneSurrogate, '\uFFFD');
}

function hasHeader(headers: Record<string, string>, name: string): boolean {
  return Object.keys(headers).some((key) => key.toLowerCase() === name);
}

function ipFamily(address: string): 4 | 6 | null {
  const family = isIP(address);
  return family === 4 || family === 6 ? family : null;
}

class Blocked extends Error {
  constructor(
    readonly errorCode: DeliveryErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** Delivers one POST and reports what happened. Never throws; always settles within about `timeoutMs`. */
export function deliverOnce(request: DeliveryRequest, options: DeliveryOptions): Promise<DeliveryResult> {
  return new Promise((resolve) => {
    try {
      attempt(request, options, resolve);
    } catch (error) {
      // attempt() catches what it can foresee; this is the backstop of "never throws".
      resolve({
        ok: false,
        status: null,
        durationMs: 0,
        responseExcerpt: null,
        responseHeaders: null,
        responseTruncated: false,
        errorCode: 'network_error',
        errorMessage: messageOf(error),
        resolvedIp: null,
        refusedReason: null,
      });
    }
  });
}

function attempt(request: DeliveryRequest, options: DeliveryOptions, done: (result: DeliveryResult) => void): void {
  const started = performance.now();
  const maxBytes = Math.max(0, options.maxResponseBytes ?? defaultMaxResponseBytes);
  const resolveHost = options.resolve ?? defaultResolve;
  let settled = false;
  let req: http.ClientRequest | null = null;
  let status: number | null = null;
  let resolvedIp: string | null = null;
  let refusedReason: string | null = null;
  let location: string | null = null;
  let responseHeaders: http.IncomingHttpHeaders | null = null;
  const chunks: Buffer[] = [];
  let received = 0;
  let truncated = false;
  // Set by lookup when it refuses, so the socket error it causes is reported as the real cause.
  let refusal: Blocked | null = null;

  const finish = (errorCode: DeliveryErrorCode | null, errorMessage: string | null): void => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    const body = Buffer.concat(chunks, received);
    // A cut body may end inside a multi-byte character; StringDecoder.write keeps only whole ones.
    // Invalid UTF-8 decodes to U+FFFD either way.
    const text = truncated ? new StringDecoder('utf8').write(body) : body.toString('utf8');
    done({
      ok: errorCode === null,
      status,
      durationMs: Math.round(performance.now() - started),
      responseExcerpt: status === null ? null : storableText(text),
      responseHeaders,
      responseTruncated: truncated,
      errorCode,
      errorMessage: errorMessage === null ? null : storableText(errorMessage.slice(0, maxErrorMessageLength)),
      resolvedIp,
      refusedReason,
    });
    // Whatever is still open (DNS, connect, body) is abandoned; a destroyed socket is not pooled.
    req?.destroy();
  };

  const fail = (error: unknown): void => {
    if (refusal) return finish(refusal.errorCode, refusal.message);
    finish(classify(error), messageOf(error));
  };

  const timer = setTimeout(
    () => finish('timeout', `no complete response within ${options.timeoutMs} ms`),
    options.timeoutMs,
  );

  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return finish('invalid_url', 'the URL does not parse');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return finish('invalid_url', `scheme ${url.protocol} is not allowed`);
  // Basic-auth credentials in a URL end up in logs and the delivery record; subscriptions must not carry them.
  if (url.username !== '' || url.password !== '')
    return finish('invalid_url', 'credentials in the URL are not allowed');
  if (url.protocol === 'http:') {
    let allowed: boolean;
    try {
      allowed = options.allowHttp?.(url) === true;
    } catch {
      allowed = false;
    }
    if (!allowed) return finish('invalid_url', 'plain http:// is not allowed for this target');
  }

  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (isIP(hostname)) {
    // Node connects to an IP literal without calling lookup, so the literal is judged here.
    resolvedIp = hostname;
    refusedReason = blockedReason(hostname, options.allowNets);
    if (refusedReason !== null) return finish('ssrf_blocked', ssrfRefusalMessage);
  }

  const lookup = (
    host: string,
    lookupOptions: LookupOptions,
    callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    const refuse = (blocked: Blocked): void => {
      refusal = blocked;
      callback(blocked, '');
    };
    resolveHost(host).then(
      (addresses) => {
        if (addresses.length === 0) return refuse(new Blocked('dns_error', `${host} has no addresses`));
        // Only addresses that pass are ever handed to the socket; the first of them is dialled.
        let firstRefused: { address: string; reason: string } | null = null;
        for (const { address } of addresses) {
          const family = ipFamily(address);
          const reason = blockedReason(address, options.allowNets);
          if (reason === null && family !== null) {
            resolvedIp = address;
            if (lookupOptions.all) callback(null, [{ address, family }]);
            else callback(null, address, family);
            return;
          }
          firstRefused ??= { address, reason: reason ?? 'invalid' };
        }
        resolvedIp = firstRefused!.address;
        refusedReason = firstRefused!.reason;
        refuse(new Blocked('ssrf_blocked', ssrfRefusalMessage));
      },
      (error: unknown) => refuse(new Blocked('dns_error', messageOf(error))),
    );
  };

  const headers: Record<string, string> = { ...request.headers };
  // Without a length Node would send the body chunked, which some receivers refuse.
  if (!hasHeader(headers, 'content-length')) headers['content-length'] = String(request.body.length);

  const secure = url.protocol === 'https:';
  try {
    req = (secure ? https : http).request({
      protocol: url.protocol,
      hostname,
      port: url.port === '' ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method: request.method ?? 'POST',
      headers,
      agent: secure ? httpsAgent : httpAgent,
      lookup,
    });
  } catch (error) {
    // Invalid header names or values throw synchronously; the message names the header, not its value.
    return finish('network_error', `the request could not be built: ${messageOf(error)}`);
  }
  const current = req;

  current.on('error', fail);
  current.on('socket', (socket: Socket) => {
    // Nothing has been written yet: the request goes out only after this socket's peer passes the
    // guard. That covers sockets reused from the pool, which were dialled under an earlier call's
    // resolver and allow list.
    const send = (): void => {
      if (settled) return;
      const peer = socket.remoteAddress;
      if (peer === undefined) return finish('network_error', 'the socket has no remote address');
      resolvedIp = peer;
      refusedReason = blockedReason(peer, options.allowNets);
      if (refusedReason !== null) return finish('ssrf_blocked', ssrfRefusalMessage);
      current.end(request.body);
    };
    if (socket.connecting) socket.once('connect', send);
    else send();
  });
  current.on('response', (res: http.IncomingMessage) => {
    status = res.statusCode ?? null;
    responseHeaders = res.headers;
    const target = res.headers.location;
    location = typeof target === 'string' ? target.slice(0, 200) : null;
    const complete = (): void => {
      if (status !== null && status >= 200 && status < 300) return finish(null, null);
      if (status !== null && status >= 300 && status < 400) {
        return finish('redirect', `redirects are not followed (HTTP ${status}${location ? ` to ${location}` : ''})`);
      }
      finish('http_status', `HTTP ${status}`);
    };
    res.on('data', (chunk: Buffer) => {
      if (settled) return;
      const room = maxBytes - received;
      if (chunk.length <= room) {
        chunks.push(chunk);
        received += chunk.length;
        return;
      }
      chunks.push(chunk.subarray(0, room));
      received = maxBytes;
      truncated = true;
      // finish() destroys the request and its socket: the rest of the body is never read.
      complete();
    });
    res.on('end', complete);
    res.on('error', fail);
    res.on('close', () => {
      if (!res.complete) finish('connection_reset', 'the connection closed before the response was complete');
    });
  });
}
