/** Shared HTTP handling of the pull clients: deadlines, 429 with Retry-After, failure messages. */
import type { Fetch, PullOutcome } from './types.js';

const pullTimeoutMs = 30_000;

/** Retry-After as seconds (possibly fractional, as Samsara sends it) or an HTTP date; default 60 s. */
export function retryAfterMs(value: string | null, now = Date.now()): number {
  if (value) {
    const seconds = Number(value);
    if (Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds * 1000);
    const date = Date.parse(value);
    if (Number.isFinite(date)) return Math.max(0, date - now);
  }
  return 60_000;
}

/**
 * Performs one provider request. Resolves to the body text and headers on 2xx (an API may signal
 * a limit inside a 2xx, as Geotab does), or to a rate-limited or failed outcome; never throws
 * (network errors and timeouts become `failed`).
 */
export async function providerRequest(
  fetchImpl: Fetch,
  url: string,
  init: RequestInit,
): Promise<{ ok: true; body: string; contentType: string; headers: Headers } | Exclude<PullOutcome, { ok: true }>> {
  let response: Response;
  try {
    response = await fetchImpl(url, { ...init, redirect: 'error', signal: AbortSignal.timeout(pullTimeoutMs) });
  } catch (error) {
    return { ok: false, kind: 'failed', message: `request to ${new URL(url).host} failed: ${(error as Error).message}` };
  }
  const body = await response.text().catch(() => '');
  if (response.status === 429) return { ok: false, kind: 'rate_limited', retryAfterMs: retryAfterMs(response.headers.get('retry-after')) };
  if (!response.ok) return { ok: false, kind: 'failed', message: `HTTP ${response.status} from ${new URL(url).host}: ${body.slice(0, 200)}` };
  return { ok: true, body, contentType: response.headers.get('content-type') ?? 'application/json', headers: response.headers };
}
