import type { Queues } from '../queue/queues.js';

/** The job id of an inbox row: enqueueing the same row twice while it is queued adds nothing. */
function inboxJobId(inboxId: number): string {
  return `inbox-${inboxId}`;
}

export async function enqueueInboxRows(queues: Queues, inboxIds: readonly number[]): Promise<void> {
  await queues.addBulk('ingest.process', inboxIds.map((inboxId) => ({ payload: { inboxId }, options: { jobId: inboxJobId(inboxId) } })));
}
