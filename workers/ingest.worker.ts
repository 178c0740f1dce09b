/** ingest queue: inbox rows → readings and latest vehicle state; and the recovery sweep. */
import type { Job } from 'bullmq';
import { adapters } from '../providers/index.js';
import { listPendingInboxIds } from '../src/db/inbox.js';
import { withTransaction } from '../src/db/pool.js';
import { enqueueHealthEvaluations } from '../src/health/enqueue.js';
import { enqueueInboxRows } from '../src/ingest/inbox-queue.js';
import { processInbox } from '../src/ingest/process-inbox.js';
import { parseJobPayload } from '../src/queue/catalog.js';
import type { WorkerDeps } from './worker-deps.js';

/** Rows younger than this are probably still in flight between the push and its enqueue. */
const recoveryGraceMs = 30_000;

export function ingestProcessor(deps: WorkerDeps) {
  return async (job: Job): Promise<Record<string, unknown>> => {
    if (job.name === 'ingest.recover') {
      parseJobPayload('ingest.recover', job.data);
      const pending = await listPendingInboxIds(deps.pool, new Date(deps.now().getTime() - recoveryGraceMs), 10_000);
      await enqueueInboxRows(deps.queues, pending);
      if (pending.length > 0) deps.log.info({ rows: pending.length }, 're-enqueued unprocessed inbox rows');
      return { requeued: pending.length };
    }
    const { inboxId } = parseJobPayload('ingest.process', job.data);
    // The row may already be done: processed with an earlier job's batch, or held by another worker.
    const outcome = await withTransaction(deps.pool, (tx) => processInbox(tx, inboxId, adapters, { includeProcessed: false, batch: true }));
    for (const row of outcome.rows) {
      deps.metrics.samplesIngested.inc({ provider: row.provider, result: 'stored' }, row.samples);
      deps.metrics.samplesIngested.inc({ provider: row.provider, result: 'skipped' }, row.skipped);
      deps.metrics.samplesIngested.inc({ provider: row.provider, result: 'unmapped' }, row.unmapped);
      if (row.error) deps.log.warn({ inboxId: row.inboxId, error: row.error }, 'inbox payload could not be normalized');
    }
    // After the commit: the health stage reads what this batch wrote. A retry of this job would find
    // the rows done and enqueue nothing, so a failure here is logged; the sweep catches up.
    const cascading = new Set(outcome.cascadeVehicleIds);
    try {
      await enqueueHealthEvaluations(deps.queues, outcome.cascadeVehicleIds, true);
      await enqueueHealthEvaluations(deps.queues, outcome.changedVehicleIds.filter((id) => !cascading.has(id)), false);
    } catch (err) {
      deps.log.warn({ err: (err as Error).message, inboxId }, 'could not enqueue health evaluations; the sweep will catch up');
    }
    return { inboxId, rows: outcome.rows.length, vehicles: outcome.changedVehicleIds.length };
  };
}
