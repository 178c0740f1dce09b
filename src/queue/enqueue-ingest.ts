/** Producers of the ingest and pull jobs: inbox rows to process, one vehicle's refresh. */
import { randomUUID } from 'node:crypto';
import type { Queues } from './queues.js';

/**
 * Queues one `ingest.process` job per inbox row, deduplicated per row while its job is queued:
 * enqueueing a queued row again adds nothing. An add while the row's job runs is kept and runs
 * after it: the row is committed before its job ends (the job still hands its vehicles to the
 * health stage), so a replay or recovery in that window would otherwise be dropped and the row
 * left pending until the next recovery sweep; the extra run finds the row done and does nothing
 * when it was not reset. Not a fixed job id: BullMQ keeps finished jobs for a while, and an add
 * under the id of a kept completed or failed job would do nothing, so a row that needs another pass
 * (its job failed for good, a replay) would never run again.
 */
export async function enqueueInboxRows(queues: Queues, inboxIds: readonly number[]): Promise<void> {
  await queues.addBulk(
    'ingest.process',
    inboxIds.map((inboxId) => ({
      payload: { inboxId },
      options: { deduplicationId: `inbox-${inboxId}`, keepLastIfActive: true },
    })),
  );
}

export interface QueuedRefresh {
  refreshId: string;
  cascade: boolean;
}

/**
 * Queues a pull of one vehicle now (`pull.refresh`), coalescing with a refresh of the vehicle
 * already queued with the same cascade flag; the answer is the refresh that will run, which may
 * be an earlier request's. Deduplicated per cascade flag so that a request with cascade never
 * joins one without it (it would be answered and run without cascade), and one without cascade
 * never gets downstream processing it did not ask for.
 */
export async function requestRefresh(queues: Queues, vehicleId: string, cascade: boolean): Promise<QueuedRefresh> {
  const refreshId = randomUUID();
  const job = await queues.add(
    'pull.refresh',
    { vehicleId, refreshId, cascade },
    { deduplicationId: `refresh-${vehicleId}-${cascade ? 'c' : 'n'}` },
  );
  // Deduplicated: BullMQ answers with the queued job's id but this request's data; read the job.
  const queued = job.id ? await queues.queue('pull').getJob(job.id) : undefined;
  const data = queued?.data as QueuedRefresh | undefined;
  return { refreshId: data?.refreshId ?? refreshId, cascade: data?.cascade ?? cascade };
}
