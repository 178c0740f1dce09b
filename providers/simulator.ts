/**
 * Simulator provider: the adapter of the simulated fleet's pushes.
 *
 * Its payloads are in the generic format (providers/generic.ts, docs/ingestion.md) and are signed the
 * same way (`X-Signature: sha256=<hex HMAC-SHA256(secret, body)>`), so the adapter reuses the
 * generic normalizer, push rules and connection rules. There is no server to pull from: refresh is 501.
 *
 * The fleet generator that produces its payloads (for the demo, tests and benchmarks) is
 * server/simulated-fleet.ts.
 */
import { genericConnection, genericPush, normalizeGeneric } from './generic.js';
import { hmacHex } from './signing.js';
import type { ProviderAdapter } from './types.js';

export const simulator: ProviderAdapter = {
  id: 'simulator',
  normalize: (raw) => normalizeGeneric(raw),
  refresh: 'not_implemented',
  push: genericPush,
  connection: genericConnection,
};

/** The `X-Signature` header value for a simulator (generic) body. */
export function signSimulatedBody(body: string, secret: string): string {
  return `sha256=${hmacHex('sha256', secret, body)}`;
}
