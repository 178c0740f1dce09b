/** What a pull client is handed in tests: the production guarded HTTP client, let through to the fakes on 127.0.0.1. */
import type { PullContext } from '../../providers/types.js';
import { guardedProviderHttp, type ProviderHttpOptions } from '../../src/ingest/provider-http.js';

export const loopbackNets = ['127.0.0.1/32'];

export function pullContext(now = new Date(), options: Partial<ProviderHttpOptions> = {}): PullContext {
  return { http: guardedProviderHttp({ allowNets: loopbackNets, ...options }), now, sessions: new Map() };
}
