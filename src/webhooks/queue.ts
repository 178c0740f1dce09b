import type { Queues } from '../queue/queues.js';
import { enqueueAfterCommit } from '../queue/after-commit.js';
import type { Logger } from '../log.js';

/**
 * Delivery jobs one webhooks worker process runs at once (its BullMQ concurrency). Each is one
 * lane turn, waiting on one receiver most of the time.
 */
export const deliverySlotsPerProcess = 64;

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

/**
 * After a transaction that changed runs committed: relay its outbox events now, and ask the
 * dispatch assistant about new runs. The events are durable already and the runs are marked
 * unchecked for dispatch, so the scheduled relay and the dispatch sweep catch up without Redis.
 */
export async function afterRunChanges(
  queues: Queues,
  log: Pick<Logger, 'warn'>,
  createdRuns: ReadonlyArray<{ companyId: string; runId: string }>,
): Promise<void> {
  await enqueueAfterCommit(log, 'webhooks.relay', () => requestRelay(queues));
  await enqueueAfterCommit(log, 'runs.dispatch-sweep', () => requestDispatch(queues, createdRuns));
}

/** Asks the dispatch assistant about each run; a repeated request for a run does nothing. */
export async function requestDispatch(
  queues: Queues,
  runs: ReadonlyArray<{ companyId: string; runId: string }>,
): Promise<void> {
  await queues.addBulk(
    'runs.dispatch',
    runs.map((payload) => ({ payload })),
  );
}
