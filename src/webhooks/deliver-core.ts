/**
 * Core (spec/000) deliveries: claim a job's deliveries, sign the exact bytes that are sent with
 * `Service-Signature: t=<unix>,v1=<hex>`, make each one's single attempt through the SSRF-guarded
 * client (in parallel), and record the attempts. No retry, whatever the outcome (spec/000
 * Events, rule 2). Claims and records are one statement per job, not per delivery.
 */
import type { Pool } from '../db/pool.js';
import { claimDeliveries, recordAttempts, type AttemptRecord, type DeliveryToSend } from '../db/webhooks.js';
import type { RunEventKind } from '../domain/run.js';
import { decryptSecret } from '../security/secrets.js';
import { deliverOnce, type DeliveryOptions } from './http-client.js';
import { deliveriesPerJob } from './queue.js';
import { signCoreBody } from './sign.js';
import { allowsPlainHttp } from './ssrf.js';
import { webhookEnvelopeBytes } from './webhook-run.js';

export interface CoreDeliveryDeps {
  pool: Pool;
  secretsKey: Buffer;
  timeoutMs: number;
  allowNets: readonly string[];
  now: () => Date;
  /** Tests inject a resolver to point hostnames at chosen addresses; production uses DNS. */
  resolve?: DeliveryOptions['resolve'];
}

export interface CoreDeliveryOutcome {
  deliveryId: string;
  succeeded: boolean;
  durationMs: number;
}

const parallelPerJob = 10;

/**
 * The longest a delivery job can run: its deliveries go out `parallelPerJob` at a time, each
 * within the deadline. Recovery waits longer than this before calling a claimed delivery abandoned.
 */
export function longestJobMs(timeoutMs: number): number {
  return Math.ceil(deliveriesPerJob / parallelPerJob) * timeoutMs;
}

export function coreDeliverer(deps: CoreDeliveryDeps) {
  const allowHttp = (url: URL) => allowsPlainHttp(url, deps.allowNets);
  const options: DeliveryOptions = { timeoutMs: deps.timeoutMs, allowNets: deps.allowNets, allowHttp, ...(deps.resolve ? { resolve: deps.resolve } : {}) };

  async function attempt(delivery: DeliveryToSend, secretOf: (sealed: Buffer) => string): Promise<AttemptRecord & { succeeded: boolean }> {
    const startedAt = deps.now();
    const record = { deliveryId: delivery.deliveryId, attemptNumber: 1, trigger: 'scheduled' as const, url: delivery.url, startedAt };
    try {
      return await send(delivery, secretOf, record);
    } catch (error) {
      // deliverOnce never throws; this is a bad stored secret or a bug. The delivery is claimed,
      // so it is recorded as failed like any other outcome, and the job's other records still land.
      return {
        ...record, durationMs: 0, responseStatus: null, responseExcerpt: null, responseTruncated: false, errorCode: 'internal_error',
        errorMessage: `the delivery could not be prepared: ${(error as Error).message}`.slice(0, 500), resolvedIp: null, succeeded: false,
      };
    }
  }

  async function send(
    delivery: DeliveryToSend,
    secretOf: (sealed: Buffer) => string,
    record: Pick<AttemptRecord, 'deliveryId' | 'attemptNumber' | 'trigger' | 'url' | 'startedAt'>,
  ): Promise<AttemptRecord & { succeeded: boolean }> {
    if (delivery.subscriptionDeleted) {
      return {
        ...record, durationMs: 0, responseStatus: null, responseExcerpt: null, responseTruncated: false, errorCode: 'subscription_deleted',
        errorMessage: 'the subscription was deleted before the delivery was sent', resolvedIp: null, succeeded: false,
      };
    }
    const body = webhookEnvelopeBytes(delivery.kind as RunEventKind, delivery.eventId, delivery.occurredAt, delivery.payloadJson);
    const result = await deliverOnce({
      url: delivery.url,
      body,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'fleet-webhooks/1.0',
        'service-signature': signCoreBody(secretOf(delivery.secretCiphertext), body, Math.floor(record.startedAt.getTime() / 1000)),
      },
    }, options);
    return {
      ...record, durationMs: result.durationMs, responseStatus: result.status, responseExcerpt: result.responseExcerpt,
      responseTruncated: result.responseTruncated, errorCode: result.errorCode, errorMessage: result.errorMessage,
      resolvedIp: result.resolvedIp, succeeded: result.ok,
    };
  }

  /** Sends what it could claim of `deliveryIds`; ids already claimed elsewhere are skipped (absent from the result). */
  return async function deliverCore(deliveryIds: readonly string[]): Promise<CoreDeliveryOutcome[]> {
    const deliveries = await claimDeliveries(deps.pool, deliveryIds);
    // A job's deliveries share a subscription, so this usually decrypts once.
    const secrets = new Map<string, string>();
    const secretOf = (sealed: Buffer) => {
      const key = sealed.toString('base64');
      if (!secrets.has(key)) secrets.set(key, decryptSecret(deps.secretsKey, sealed));
      return secrets.get(key)!;
    };
    // A few at a time: one receiver gets a bounded number of parallel connections per job.
    const attempts: Array<AttemptRecord & { succeeded: boolean }> = [];
    let next = 0;
    await Promise.all(Array.from({ length: Math.min(parallelPerJob, deliveries.length) }, async () => {
      while (next < deliveries.length) {
        const delivery = deliveries[next++]!;
        attempts.push(await attempt(delivery, secretOf));
      }
    }));
    await recordAttempts(deps.pool, attempts);
    return attempts.map((a) => ({ deliveryId: a.deliveryId, succeeded: a.succeeded, durationMs: a.durationMs }));
  };
}
