/**
 * The ingest recovery sweep (`ingest.recover`): wakes the drains of the inbox rows still owed
 * processing whose own enqueue never came (Redis down after the inbox insert committed, a job lost).
 */
import { listPendingInboxIds } from '../db/inbox.js';
import type { Pool } from '../db/pool.js';
import type { Logger } from '../log.js';
import { enqueueGraceMs } from '../queue/after-commit.js';
import type { Queues } from '../queue/queues.js';
import { enqueueInboxRows } from '../queue/enqueue-ingest.js';

/** Rows re-enqueued per sweep at most: a larger backlog is taken by the next sweeps, oldest first. */
const rowsPerSweep = 10_000;

/** Rows received less than `enqueueGraceMs` ago may still be on their way to the queue and are left alone. */
export async function recoverInbox(deps: {
  pool: Pool;
  queues: Queues;
  now: () => Date;
  log: Pick<Logger, 'info'>;
}): Promise<{ requeued: number }> {
  const pending = await listPendingInboxIds(deps.pool, new Date(deps.now().getTime() - enqueueGraceMs), rowsPerSweep);
  await enqueueInboxRows(deps.queues, pending);
  if (pending.length > 0) deps.log.info({ rows: pending.length }, 're-enqueued unprocessed inbox rows');
  return { requeued: pending.length };
}
