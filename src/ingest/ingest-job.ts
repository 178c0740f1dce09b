/**
 * The ingest job for one inbox row (and the batch it takes with it): process with poison
 * isolation, count the outcome in metrics and logs, then hand the changed vehicles to the health
 * stage after the commit (the evaluations the transaction recorded as owed).
 */
import type { ProviderAdapter } from '../../providers/types.js';
import type { Pool } from '../db/pool.js';
import { deleteOwedEvaluations } from '../db/owed-evaluations.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import { enqueueAfterCommit } from '../queue/after-commit.js';
import type { Queues } from '../queue/queues.js';
import { ingestInboxBatch } from './isolation.js';
import { enqueueOwedEvaluations, mergeOwedEvaluations } from './owed-evaluations.js';

export interface IngestJobDeps {
  pool: Pool;
  queues: Queues;
  log: Logger;
  metrics: Metrics;
}

export async function runIngestJob(
  deps: IngestJobDeps,
  inboxId: number,
  adapters: Readonly<Record<string, ProviderAdapter>>,
): Promise<Record<string, unknown>> {
  // The row may already be done: processed with an earlier job's batch, or held by another worker.
  const outcome = await ingestInboxBatch(deps.pool, inboxId, adapters);
  const { metrics, log } = deps;
  for (const row of outcome.rows) {
    metrics.samplesIngested.inc({ provider: row.provider, result: 'stored' }, row.samples);
    metrics.samplesIngested.inc({ provider: row.provider, result: 'skipped' }, row.skipped);
    metrics.samplesIngested.inc({ provider: row.provider, result: 'unmapped' }, row.unmapped);
    for (const [reason, count] of Object.entries(row.rejected))
      metrics.samplesRejected.inc({ provider: row.provider, reason }, count);
    if (row.error) log.warn({ inboxId: row.inboxId, error: row.error }, 'inbox payload could not be normalized');
  }
  if (outcome.isolated) {
    metrics.inboxBatchesIsolated.inc();
    log.warn({ inboxId }, 'ingest batch failed; its rows were processed one by one');
  }
  for (const row of outcome.parked) {
    metrics.inboxParked.inc({ provider: row.provider });
    log.error(
      { inboxId: row.id, provider: row.provider, connectionId: row.connectionId, error: row.error },
      'inbox row parked: it fails on its own (fleetctl inbox failed lists it, fleetctl inbox replay --parked retries it)',
    );
  }
  // After the commit: the health stage reads what this batch wrote. A retry of this job would find
  // the rows done and enqueue nothing, so what a failure or a crash here leaves owed (recorded in
  // the batch's transaction) is enqueued by the relay; the record is deleted once enqueued.
  await enqueueAfterCommit(
    log,
    'health.relay',
    async () => {
      await enqueueOwedEvaluations(
        deps.queues,
        mergeOwedEvaluations([
          { cascadeVehicleIds: outcome.cascadeVehicleIds, noCascadeVehicleIds: outcome.changedVehicleIds },
        ]),
      );
      await deleteOwedEvaluations(deps.pool, outcome.owedIds);
    },
    { inboxId },
  );
  return {
    inboxId,
    rows: outcome.rows.length,
    parked: outcome.parked.length,
    vehicles: outcome.changedVehicleIds.length,
  };
}
