/**
 * What a delivery lane needs, core (src/webhooks/deliver-core.ts) and monitoring
 * (src/monitoring/deliver.ts) alike: both send signed bodies through the same SSRF-guarded client
 * and share the process's lane slots.
 */
import type { Pool } from '../db/pool.js';
import type { Logger } from '../log.js';
import type { Queues } from '../queue/queues.js';
import { decryptSecret } from '../security/secrets.js';
import type { DeliveryOptions } from '../http/client.js';
import { allowsPlainHttp } from '../http/ssrf.js';
import type { LaneSlots } from './lane-slots.js';

export interface DeliveryDeps {
  pool: Pool;
  queues: Queues;
  secretsKey: Buffer;
  timeoutMs: number;
  allowNets: readonly string[];
  now: () => Date;
  /** Operators' log: SSRF refusals with the refused address. */
  log: Pick<Logger, 'warn'>;
  /** Tests inject a resolver to point hostnames at chosen addresses; production uses DNS. */
  resolve?: DeliveryOptions['resolve'];
  /** The process's lane slots, shared by core and monitoring lanes (lane-slots.ts). */
  slots?: LaneSlots;
}

/** The outbound client's options for a lane's sends. */
export function deliveryOptions(deps: DeliveryDeps): DeliveryOptions {
  return {
    timeoutMs: deps.timeoutMs,
    allowNets: deps.allowNets,
    allowHttp: (url: URL) => allowsPlainHttp(url, deps.allowNets),
    ...(deps.resolve ? { resolve: deps.resolve } : {}),
  };
}

/** A turn's secrets: its deliveries share a subscription, so each sealed secret is decrypted once. */
export function turnSecrets(secretsKey: Buffer): (sealed: Buffer) => string {
  const secrets = new Map<string, string>();
  return (sealed) => {
    const key = sealed.toString('base64');
    if (!secrets.has(key)) secrets.set(key, decryptSecret(secretsKey, sealed));
    return secrets.get(key)!;
  };
}
