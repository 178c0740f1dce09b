/**
 * One HTTP exchange with the service, retried when that is safe, and the envelope unwrapped.
 *
 * Retries (at most `maxRetries`, default 2) happen on 429, 502, 503, 504, 409
 * `IDEMPOTENCY_KEY_IN_USE` and on no answer at all, and only for a request that may run twice
 * without effect: GET, PUT and DELETE, or a POST carrying an `Idempotency-Key`. A refused POST
 * without one is never sent again: it might have done its work before the answer was lost. The
 * wait is the answer's `Retry-After` when it has one (a wait longer than `maxRetryDelayMs` is not
 * waited: the error is thrown), else an exponential backoff from 0.5 s, capped at 8 s, with jitter.
 */
import { randomUUID } from 'node:crypto';
import { ConnectionError, errorFromResponse, retryAfterMs, type ApiError } from './errors.js';

export interface ClientOptions {
  /** Where the service answers, e.g. `https://fleet.example.com` (no path: operations carry theirs). */
  baseUrl: string;
  /** An API key of your company (`Authorization: Bearer <key>`). */
  apiKey: string;
  /** A `fetch` to use instead of the global one (tests, proxies, instrumentation). */
  fetch?: typeof fetch;
  /** Retries of a failed call when retrying is safe; default 2, 0 turns them off. */
  maxRetries?: number;
  /** Longest single wait before a retry, `Retry-After` included; default 60 000 ms. */
  maxRetryDelayMs?: number;
  /** Deadline of each attempt; default 60 000 ms. */
  timeoutMs?: number;
  /** Sent as `User-Agent` after the SDK's own name. */
  userAgent?: string;
}

export interface RequestOptions {
  /**
   * The `Idempotency-Key` of a paid call. Generated when not given, and reused on the call's own
   * retries; pass your own to make a retry of yours (after a crash, say) return the first answer
   * without being billed again.
   */
  idempotencyKey?: string;
  /** Cancels the call, its retries and their waits. */
  signal?: AbortSignal;
  /** Extra request headers. */
  headers?: Record<string, string>;
  maxRetries?: number;
  timeoutMs?: number;
}

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One operation's request, as the generated methods describe it. */
export interface RequestSpec {
  method: HttpMethod;
  /** The path with its parameters filled in and encoded. */
  path: string;
  query?: object | undefined;
  body?: unknown;
  /** The operation takes an `Idempotency-Key`: one is generated when the caller gave none. */
  idempotencyKey?: boolean;
  accept?: string;
}

/** The success envelope. */
export interface Envelope<T> {
  success: true;
  data: T;
  meta: Meta;
}

export interface Meta {
  limit: number | null;
  offset: number | null;
  total: number | null;
  timestamp: string | null;
  version: string | null;
}

/** package.json's version (test/client.test.ts keeps them equal): sent in User-Agent. */
export const sdkVersion = '0.1.0';
const retriedStatuses = new Set([429, 502, 503, 504]);
const idempotentMethods = new Set<HttpMethod>(['GET', 'PUT', 'DELETE']);

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function queryString(query: object | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    for (const item of Array.isArray(value) ? value : [value]) params.append(key, String(item));
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}

export class Transport {
  private readonly fetch: typeof fetch;
  private readonly baseUrl: string;

  constructor(private readonly options: ClientOptions) {
    if (!options.baseUrl) throw new TypeError('createClient: baseUrl is required');
    if (!options.apiKey) throw new TypeError('createClient: apiKey is required');
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.fetch = options.fetch ?? globalThis.fetch;
  }

  /** The call's envelope (`data` and `meta`). */
  async envelope<T>(spec: RequestSpec, options: RequestOptions = {}): Promise<Envelope<T>> {
    const response = await this.send(spec, options);
    const type = response.headers.get('content-type') ?? '';
    if (!type.includes('json')) {
      throw new TypeError(`${spec.method} ${spec.path} answered ${type || 'no content type'}, not JSON`);
    }
    return (await response.json()) as Envelope<T>;
  }

  /** The call's `data`. */
  async json<T>(spec: RequestSpec, options?: RequestOptions): Promise<T> {
    return (await this.envelope<T>(spec, options)).data;
  }

  /** The call's body as bytes (a report's PDF). */
  async binary(spec: RequestSpec, options?: RequestOptions): Promise<Uint8Array> {
    const response = await this.send(spec, options ?? {});
    return new Uint8Array(await response.arrayBuffer());
  }

  /** Sends the request until it succeeds, fails for good, or runs out of safe retries. */
  private async send(spec: RequestSpec, options: RequestOptions): Promise<Response> {
    const idempotencyKey = options.idempotencyKey ?? (spec.idempotencyKey ? randomUUID() : undefined);
    const retryable = idempotentMethods.has(spec.method) || idempotencyKey !== undefined;
    const maxRetries = retryable ? (options.maxRetries ?? this.options.maxRetries ?? 2) : 0;
    const headers: Record<string, string> = {
      accept: spec.accept ?? 'application/json',
      authorization: `Bearer ${this.options.apiKey}`,
      'user-agent': `fleet-telematics-sdk/${sdkVersion}${this.options.userAgent ? ` ${this.options.userAgent}` : ''}`,
      ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }),
      ...(spec.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...options.headers,
    };
    const url = `${this.baseUrl}${spec.path}${queryString(spec.query)}`;
    const body = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    const timeoutMs = options.timeoutMs ?? this.options.timeoutMs ?? 60_000;

    for (let attempt = 0; ; attempt++) {
      const signals = [AbortSignal.timeout(timeoutMs), ...(options.signal ? [options.signal] : [])];
      let response: Response;
      try {
        response = await this.fetch(url, {
          method: spec.method,
          headers,
          ...(body === undefined ? {} : { body }),
          signal: AbortSignal.any(signals),
        });
      } catch (err) {
        if (options.signal?.aborted) throw err;
        const failure = new ConnectionError(`${spec.method} ${spec.path}: ${(err as Error).message}`, { cause: err });
        if (attempt >= maxRetries) throw failure;
        await sleep(this.backoffMs(attempt), options.signal);
        continue;
      }
      if (response.ok) return response;

      const error = await this.errorOf(response);
      const retryAfter = retryAfterMs(response.headers.get('retry-after'), Date.now());
      const again =
        attempt < maxRetries &&
        (retriedStatuses.has(response.status) || error.code === 'IDEMPOTENCY_KEY_IN_USE') &&
        retryAfter <= (this.options.maxRetryDelayMs ?? 60_000);
      if (!again) throw error;
      await sleep(retryAfter || this.backoffMs(attempt), options.signal);
    }
  }

  private async errorOf(response: Response): Promise<ApiError> {
    const text = await response.text().catch(() => '');
    let body: unknown = null;
    try {
      body = JSON.parse(text);
    } catch {
      // Not JSON (a proxy's page): the status alone describes it.
    }
    return errorFromResponse(response.status, body, response.headers);
  }

  /** 0.5 s doubling per attempt, capped at 8 s, with jitter down to half so clients do not retry in step. */
  private backoffMs(attempt: number): number {
    const ceiling = Math.min(8_000, 500 * 2 ** attempt);
    return Math.round(ceiling * (0.5 + Math.random() / 2));
  }
}
