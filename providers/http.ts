/**
 * Shared HTTP handling of the pull clients: 429 with Retry-After, failure messages. The clients
 * never open sockets themselves: they are handed a `ProviderHttp`, which in production is the
 * SSRF-guarded, size-limited client of src/ingest/provider-http.ts.
 */
import type { ProviderHttp, ProviderHttpRequest, PullOutcome } from './types.js';

/** Retry-After as seconds (possibly fractional, as Samsara sends it) or an HTTP date; default 60 s. */
export function retryAfterMs(value: string | undefined, now = Date.now()): number {
  if (value) {
    const seconds = Number(value);
    if (Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds * 1000);
    const date = Date.parse(value);
    if (Number.isFinite(date)) return Math.max(0, date - now);
  }
  return 60_000;
}

export type Failure = Exclude<PullOutcome, { ok: true }>;

/**
 * Performs one provider request. Resolves to the body text and headers on 2xx (an API may signal
 * a limit inside a 2xx, as Geotab does), or to a rate-limited or failed outcome; never throws.
 */
export async function providerRequest(
  http: ProviderHttp,
  request: ProviderHttpRequest,
): Promise<{ ok: true; body: string; contentType: string; headers: Record<string, string> } | Failure> {
  const host = new URL(request.url).host;
  const sent = await http(request);
  if (!sent.ok) return { ok: false, kind: 'failed', message: `request to ${host} failed: ${sent.message}` };
  const { status, headers, body } = sent.response;
  if (status === 429) return { ok: false, kind: 'rate_limited', retryAfterMs: retryAfterMs(headers['retry-after']) };
  if (status < 200 || status >= 300)
    return { ok: false, kind: 'failed', message: `HTTP ${status} from ${host}: ${body.slice(0, 200)}` };
  return { ok: true, body, contentType: headers['content-type'] ?? 'application/json', headers };
}

/** `base_url` without its trailing slashes, joined with `path` (which starts with "/"). */
export function endpoint(baseUrl: string, path: string): string {
  let end = baseUrl.length;
  while (end > 0 && baseUrl[end - 1] === '/') end--;
  return `${baseUrl.slice(0, end)}${path}`;
}
