import type { FastifyBaseLogger } from 'fastify';
import type { Queues } from '../queue/queues.js';

/**
 * Asks for a relay run now. Deduplicated with one run kept queued behind a running one, so a burst
 * of run changes costs one or two relay passes, and none is missed.
 */
export async function requestRelay(queues: Queues): Promise<void> {
  await queues.add('webhooks.relay', {}, { deduplicationId: 'webhooks-relay', keepLastIfActive: true });
}

export async function enqueueDeliveries(queues: Queues, deliveryIds: readonly string[]): Promise<void> {
  await queues.addBulk('webhooks.deliver', deliveryIds.map((deliveryId) => ({ payload: { deliveryId }, options: { jobId: `delivery-${deliveryId}` } })));
}

/**
 * After a transaction that changed runs committed: relay its outbox events now, and ask the
 * dispatch assistant about new runs. The events are durable already; if Redis is away the
 * scheduled relay picks them up, so a failure here is only logged.
 */
export async function afterRunChanges(
  queues: Queues,
  log: Pick<FastifyBaseLogger, 'warn'>,
  createdRuns: ReadonlyArray<{ companyId: string; runId: string }>,
): Promise<void> {
  try {
    await requestRelay(queues);
    await queues.addBulk('runs.dispatch', createdRuns.map((payload) => ({ payload })));
  } catch (err) {
    log.warn({ err: (err as Error).message }, 'could not queue the relay or dispatch; the scheduled relay will catch up');
  }
}
