/**
 * The ingest drain job: batches of the oldest pending inbox rows until none is left, each processed
 * with poison isolation, counted in metrics and logs, and its changed vehicles handed to the health
 * stage after its commit (the evaluations the transaction recorded as owed).
 */
import type { ProviderAdapter } from '../../providers/types.js';
import type { Pool } from '../db/pool.js';
import { deleteOwedEvaluations } from '../db/owed-evaluations.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import { enqueueAfterCommit } from '../queue/after-commit.js';
import { enqueueDrain } from '../queue/enqueue-ingest.js';
import type { Queues } from '../queue/queues.js';
import { ingestInboxBatch } from './isolation.js';
import { batchRows } from './process-inbox.js';
import { enqueueOwedEvaluations, mergeOwedEvaluations } from './owed-evaluations.js';

export interface IngestJobDeps {
  pool: Pool;
  queues: Queues;
  log: Logger;
  metrics: Metrics;
}

/**
 * Batches one drain run takes at most (16 × 32 rows) before it hands its shard to a new run: a
 * steady stream never holds one job forever, so a worker's shutdown and the job's lock renewal
 * stay ordinary.
 */
const batchesPerRun = 16;

export interface DrainOutcome {
  batches: number;
  rows: number;
  parked: number;
  vehicles: number;
}

/**
 * Drains the inbox: batch after batch until one comes back short (nothing more pending, or the
 * rest held by other drains, whose rows they are). A row committed after this run's last claim
 * woke a drain of its own (src/queue/enqueue-ingest.ts), so stopping there loses nothing.
 */
export async function runIngestDrain(
  deps: IngestJobDeps,
  shard: number,
  adapters: Readonly<Record<string, ProviderAdapter>>,
): Promise<DrainOutcome> {
  const drained: DrainOutcome = { batches: 0, rows: 0, parked: 0, vehicles: 0 };
  while (drained.batches < batchesPerRun) {
    const batch = await runIngestBatch(deps, adapters);
    drained.batches += 1;
    drained.rows += batch.rows;
    drained.parked += batch.parked;
    drained.vehicles += batch.vehicles;
    if (batch.claimed < batchRows) return drained;
  }
  // Full batches to the end: more is likely pending; a new run of this shard goes on after this one.
  await enqueueAfterCommit(deps.log, 'ingest.recover', () => enqueueDrain(deps.queues, shard), { shard });
  return drained;
}

/** One batch of the drain; `claimed` says whether the batch was full. */
export async function runIngestBatch(
  deps: IngestJobDeps,
  adapters: Readonly<Record<string, ProviderAdapter>>,
): Promise<{ claimed: number; rows: number; parked: number; vehicles: number }> {
  const outcome = await ingestInboxBatch(deps.pool, adapters);
  const { metrics, log } = deps;
  for (const row of outcome.rows) {
    metrics.samplesIngested.inc({ provider: row.provider, result: 'stored' }, row.samples);
    metrics.samplesIngested.inc({ provider: row.provider, result: 'skipped' }, row.skipped);
    metrics.samplesIngested.inc({ provider: row.provider, result: 'unmapped' }, row.unmapped);
    for (const [reason, count] of Object.entries(row.rejected))
      metrics.samplesRejected.inc({ provider: row.provider, reason }, count);
    if (row.error) log.warn({ inboxId: row.inboxId, error: row.error }, 'inbox payload could not be normalized');
  }
  const inboxIds = outcome.rows.map((row) => row.inboxId);
  if (outcome.isolatedBy !== null) {
    metrics.inboxBatchesIsolated.inc();
    log.warn({ inboxIds, error: outcome.isolatedBy }, 'ingest batch failed; its rows were processed one by one');
  }
  for (const row of outcome.parked) {
    metrics.inboxParked.inc({ provider: row.provider });
    log.error(
      { inboxId: row.id, provider: row.provider, connectionId: row.connectionId, error: row.error },
      'inbox row parked: it fails on its own (fleetctl inbox failed lists it, fleetctl inbox replay --parked retries it)',
    );
  }
  // After the commit: the health stage reads what this batch wrote. A retry would find the rows
  // done and enqueue nothing, so what a failure or a crash here leaves owed (recorded in the
  // batch's transaction) is enqueued by the relay; the record is deleted once enqueued.
  if (outcome.owedIds.length > 0) {
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
      { inboxIds },
    );
  }
  return {
    claimed: outcome.claimed,
    rows: outcome.rows.length,
    parked: outcome.parked.length,
    vehicles: outcome.changedVehicleIds.length,
  };
}
