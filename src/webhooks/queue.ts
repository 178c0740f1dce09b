import type { FastifyBaseLogger } from 'fastify';
import type { PendingDelivery } from '../db/webhooks.js';
import type { Queues } from '../queue/queues.js';

/**
 * Deliveries per job. One job claims and records its deliveries in one statement each, so the
 * Postgres and Redis round trips of a delivery are shared (research/pipeline-perf.md §2);
 * small enough that one slow receiver holds few others back.
 */
export const deliveriesPerJob = 100;

/**
 * Asks for a relay run now. Deduplicated with one run kept queued behind a running one, so a burst
 * of run changes costs one or two relay passes, and none is missed.
 */
export async function requestRelay(queues: Queues): Promise<void> {
  await queues.add('webhooks.relay', {}, { deduplicationId: 'webhooks-relay', keepLastIfActive: true });
}

/** Queues deliveries in jobs of up to `deliveriesPerJob`, each job for one subscription (one receiver). */
export async function enqueueDeliveries(queues: Queues, deliveries: readonly PendingDelivery[]): Promise<void> {
  const bySubscription = new Map<string, string[]>();
  for (const delivery of deliveries) {
    const ids = bySubscription.get(delivery.subscriptionId) ?? [];
    ids.push(delivery.id);
    bySubscription.set(delivery.subscriptionId, ids);
  }
  const jobs: Array<{ payload: { deliveryIds: string[] } }> = [];
  for (const ids of bySubscription.values()) {
    for (let i = 0; i < ids.length; i += deliveriesPerJob) jobs.push({ payload: { deliveryIds: ids.slice(i, i + deliveriesPerJob) } });
  }
  await queues.addBulk('webhooks.deliver', jobs);
}

/**
 * After a transaction that changed runs committed: relay its outbox events now, and ask the
 * dispatch assistant about new runs. The events are durable already and the runs are marked
 * unchecked for dispatch; if Redis is away the scheduled relay and the dispatch sweep pick them
 * up, so a failure here is only logged.
 */
export async function afterRunChanges(
  queues: Queues,
  log: Pick<FastifyBaseLogger, 'warn'>,
  createdRuns: ReadonlyArray<{ companyId: string; runId: string }>,
): Promise<void> {
  try {
    await requestRelay(queues);
  } catch (err) {
    log.warn({ err: (err as Error).message }, 'could not queue the relay; the scheduled relay will catch up');
  }
  try {
    await requestDispatch(queues, createdRuns);
  } catch (err) {
    log.warn({ err: (err as Error).message }, 'could not queue dispatch; the dispatch sweep will catch up');
  }
}

/** Asks the dispatch assistant about each run; a repeated request for a run does nothing. */
export async function requestDispatch(queues: Queues, runs: ReadonlyArray<{ companyId: string; runId: string }>): Promise<void> {
  await queues.addBulk('runs.dispatch', runs.map((payload) => ({ payload })));
}
