/**
 * Producers of the core webhooks jobs: the outbox relay and the delivery lanes (one per
 * subscription). Monitoring lanes share the lane shape (enqueue-monitoring.ts).
 */
import type { Queues } from './queues.js';

/**
 * Asks for a relay run now. Deduplicated with one run kept queued behind a running one, so a burst
 * of run changes costs one or two relay passes, and none is missed.
 */
export async function requestRelay(queues: Queues): Promise<void> {
  await queues.add('webhooks.relay', {}, { deduplicationId: 'webhooks-relay', keepLastIfActive: true });
}

export interface Lane {
  subscriptionId: string;
  companyId: string;
}

/**
 * Asks for a turn of each lane (one per subscription; docs/webhooks.md "Lanes"). A lane has at
 * most one job running and one waiting (BullMQ deduplication, the waiting one kept while one
 * runs), so asking again is free, a subscription's backlog is one job in the queue however deep
 * it is, and the queue takes lanes in turn rather than one tenant's backlog first.
 */
export async function requestLanes(queues: Queues, lanes: readonly Lane[], delayMs = 0): Promise<void> {
  const bySubscription = new Map(lanes.map((lane) => [lane.subscriptionId, lane]));
  await queues.addBulk(
    'webhooks.deliver',
    [...bySubscription.values()].map((lane) => ({
      payload: { subscriptionId: lane.subscriptionId, companyId: lane.companyId },
      options: { deduplicationId: `lane-${lane.subscriptionId}`, keepLastIfActive: true, delayMs },
    })),
  );
}
