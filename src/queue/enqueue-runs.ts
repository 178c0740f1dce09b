/** Producers of the runs jobs: relay and dispatch after run changes, and the health consumer. */
import type { Logger } from '../log.js';
import { enqueueAfterCommit } from './after-commit.js';
import { requestRelay } from './enqueue-webhooks.js';
import type { Queues } from './queues.js';

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

/** Asks the runs stage to consume new health events (deduplicated; one run kept behind a running one). */
export async function requestHealthConsumer(queues: Queues): Promise<void> {
  await queues.add('runs.from-health', {}, { deduplicationId: 'runs-from-health', keepLastIfActive: true });
}
