/**
 * The HTTP client of provider pulls: the webhook delivery client (src/http/client.ts),
 * so a provider `base_url` gets the same SSRF guard as a webhook URL (the address dialled is the
 * address checked, at connect time, every time), https only outside WEBHOOK_ALLOW_NETS, no
 * redirects, one deadline, and at most `maxResponseBytes` of any answer read: a bigger answer is
 * a failed pull, never a truncated page.
 */
import type { ProviderHttp } from '../../providers/types.js';
import { deliverOnce } from '../http/client.js';
import { allowsPlainHttp } from '../http/ssrf.js';

/** The deadline of one provider request (DNS, connect, TLS, answer). */
export const providerRequestTimeoutMs = 30_000;
/** The largest provider answer read; a Geotab page of 5000 records is about 1.5 MB. */
export const providerResponseLimitBytes = 32 * 1_048_576;

export interface ProviderHttpOptions {
  /** WEBHOOK_ALLOW_NETS. */
  allowNets: readonly string[];
  timeoutMs?: number;
  maxResponseBytes?: number;
}

export function guardedProviderHttp(options: ProviderHttpOptions): ProviderHttp {
  const maxResponseBytes = options.maxResponseBytes ?? providerResponseLimitBytes;
  return async (request) => {
    const result = await deliverOnce(
      {
        url: request.url,
        method: request.method,
        body: Buffer.from(request.body ?? '', 'utf8'),
        headers: request.headers,
      },
      {
        timeoutMs: options.timeoutMs ?? providerRequestTimeoutMs,
        allowNets: options.allowNets,
        maxResponseBytes,
        allowHttp: (url) => allowsPlainHttp(url, options.allowNets),
      },
    );
    if (result.responseTruncated)
      return { ok: false, message: `the answer is larger than ${maxResponseBytes} bytes (HTTP ${result.status})` };
    // An answer counts only when read to its end; a deadline or a cut connection after the status line does not.
    const complete = result.errorCode === null || result.errorCode === 'http_status' || result.errorCode === 'redirect';
    if (result.status === null || result.responseHeaders === null || !complete)
      return { ok: false, message: `${result.errorCode ?? 'network_error'}: ${result.errorMessage ?? 'no answer'}` };
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(result.responseHeaders))
      if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
    return { ok: true, response: { status: result.status, headers, body: result.responseExcerpt ?? '' } };
  };
}
