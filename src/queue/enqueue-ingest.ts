/** Producers of the ingest and pull jobs: the drains of pending inbox rows, one vehicle's refresh. */
import { randomUUID } from 'node:crypto';
import type { Queues } from './queues.js';

/**
 * Drain jobs (`ingest.drain`) that may run at once across all worker processes: room for four
 * ingest worker processes at their concurrency of 4 (workers/index.ts). A drain that finds its
 * rows taken by another costs one indexed SKIP LOCKED select.
 */
export const drainShards = 16;

/** The drain a row wakes: spread by id, so a burst of one connection's pushes wakes them all. */
export function drainShardOf(inboxId: number): number {
  return inboxId % drainShards;
}

/**
 * Wakes the drains of these inbox rows: one `ingest.drain` job per shard, not per row. A drain
 * claims whatever rows are pending (src/ingest/ingest-job.ts), so a burst of pushes costs at most a
 * queued and a following job per shard, and the queue's depth follows the inbox. Deduplicated per
 * shard while queued: an add for a queued drain adds nothing, since that drain has not claimed yet
 * and will find the row. An add while the shard's drain runs is kept and runs after it: that run
 * may have made its last claim before the row committed. Not a fixed job id: BullMQ keeps finished
 * jobs for a while, and an add under the id of a kept completed or failed job would do nothing.
 */
export async function enqueueInboxRows(queues: Queues, inboxIds: readonly number[]): Promise<void> {
  await queues.addBulk('ingest.drain', [...new Set(inboxIds.map(drainShardOf))].map(drainJob));
}

/** Another run of one shard's drain, after the running one (a run that stopped with rows left). */
export async function enqueueDrain(queues: Queues, shard: number): Promise<void> {
  await queues.addBulk('ingest.drain', [drainJob(shard)]);
}

function drainJob(shard: number) {
  return { payload: { shard }, options: { deduplicationId: `ingest-drain-${shard}`, keepLastIfActive: true } };
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
