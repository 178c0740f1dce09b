/**
 * One core (spec/000) delivery: claim it, sign the exact bytes that are sent with
 * `Service-Signature: t=<unix>,v1=<hex>`, make the single attempt through the SSRF-guarded
 * client, and record it. No retry, whatever the outcome (spec/000 Events, rule 2).
 */
import { BlockList, isIP } from 'node:net';
import type { Pool } from '../db/pool.js';
import { claimDelivery, recordAttempt } from '../db/webhooks.js';
import type { RunEventKind } from '../domain/run.js';
import { decryptSecret } from '../security/secrets.js';
import { deliverOnce, type DeliveryOptions } from './http-client.js';
import { signCoreBody } from './sign.js';
import { webhookEnvelope, type WebhookRun } from './webhook-run.js';

export interface CoreDeliveryDeps {
  pool: Pool;
  secretsKey: Buffer;
  timeoutMs: number;
  allowNets: readonly string[];
  now: () => Date;
  /** Tests inject a resolver to point hostnames at chosen addresses; production uses DNS. */
  resolve?: DeliveryOptions['resolve'];
}

export type CoreDeliveryOutcome = 'succeeded' | 'failed' | 'skipped';

/** http:// is accepted only to an address inside WEBHOOK_ALLOW_NETS (local receivers, tests). */
export function allowsPlainHttp(allowNets: readonly string[]): (url: URL) => boolean {
  const list = new BlockList();
  for (const net of allowNets) {
    const [address, prefix] = net.split('/');
    if (address && prefix) list.addSubnet(address, Number(prefix), isIP(address) === 6 ? 'ipv6' : 'ipv4');
  }
  return (url) => {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const family = isIP(host);
    return family !== 0 && list.check(host, family === 6 ? 'ipv6' : 'ipv4');
  };
}

export function coreDeliverer(deps: CoreDeliveryDeps) {
  const allowHttp = allowsPlainHttp(deps.allowNets);
  return async function deliverCore(deliveryId: string): Promise<CoreDeliveryOutcome> {
    const delivery = await claimDelivery(deps.pool, deliveryId);
    if (!delivery) return 'skipped';
    const startedAt = deps.now();
    if (delivery.subscriptionDeleted) {
      await recordAttempt(deps.pool, {
        deliveryId, attemptNumber: 1, trigger: 'scheduled', url: delivery.url, startedAt, durationMs: 0, responseStatus: null,
        responseExcerpt: null, responseTruncated: false, errorCode: 'subscription_deleted',
        errorMessage: 'the subscription was deleted before the delivery was sent', resolvedIp: null,
      }, false);
      return 'failed';
    }
    const body = Buffer.from(JSON.stringify(
      webhookEnvelope(delivery.kind as RunEventKind, delivery.eventId, delivery.occurredAt, delivery.payload as WebhookRun),
    ));
    const secret = decryptSecret(deps.secretsKey, delivery.secretCiphertext);
    const result = await deliverOnce(
      {
        url: delivery.url,
        body,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'fleet-webhooks/1.0',
          'service-signature': signCoreBody(secret, body, Math.floor(startedAt.getTime() / 1000)),
        },
      },
      { timeoutMs: deps.timeoutMs, allowNets: deps.allowNets, allowHttp, ...(deps.resolve ? { resolve: deps.resolve } : {}) },
    );
    await recordAttempt(deps.pool, {
      deliveryId, attemptNumber: 1, trigger: 'scheduled', url: delivery.url, startedAt, durationMs: result.durationMs,
      responseStatus: result.status, responseExcerpt: result.responseExcerpt, responseTruncated: result.responseTruncated,
      errorCode: result.errorCode, errorMessage: result.errorMessage, resolvedIp: result.resolvedIp,
    }, result.ok);
    return result.ok ? 'succeeded' : 'failed';
  };
}
