import type { Queues } from '../queue/queues.js';

/**
 * Queues one `ingest.process` job per inbox row, deduplicated per row while its job is queued or
 * running: enqueueing a queued row again adds nothing. Not a fixed job id: BullMQ keeps finished
 * jobs for a while, and an add under the id of a kept completed or failed job would do nothing,
 * so a row that needs another pass (its job failed for good, a replay) would never run again.
 */
export async function enqueueInboxRows(queues: Queues, inboxIds: readonly number[]): Promise<void> {
  await queues.addBulk(
    'ingest.process',
    inboxIds.map((inboxId) => ({ payload: { inboxId }, options: { deduplicationId: `inbox-${inboxId}` } })),
  );
}
