/**
 * The health evaluations an ingest transaction owes (migrations/0025_health_evaluations_owed.sql).
 * The transaction that stores the readings records them; right after its commit the ingest job
 * enqueues them and deletes the record. A record left behind, because the process died between
 * the commit and the enqueue or Redis was away, is enqueued by the relay (the `health.relay` job,
 * every HEALTH_RELAY_INTERVAL_MS), which deletes what it enqueued.
 *
 * Nothing is evaluated twice needlessly: the relay only takes records older than its interval,
 * which the job's own enqueue has long deleted, and the evaluation jobs are deduplicated per
 * vehicle and cascade flag (src/queue/enqueue-health.ts), so a relayed vehicle whose job is still queued
 * adds nothing. A crash after the enqueue but before the delete costs one more evaluation, which
 * finds nothing new.
 */
import { deleteOwedEvaluations, lockOwedEvaluations, type OwedEvaluations } from '../db/owed-evaluations.js';
import { withTransaction, type Pool } from '../db/pool.js';
import { enqueueHealthEvaluations } from '../queue/enqueue-health.js';
import type { Queues } from '../queue/queues.js';

/**
 * Several records as one: a vehicle owed with cascade anywhere is evaluated once, with cascade, as
 * when one ingest batch holds rows with and without it.
 */
export function mergeOwedEvaluations(owed: readonly OwedEvaluations[]): OwedEvaluations {
  const cascade = new Set(owed.flatMap((o) => o.cascadeVehicleIds));
  const noCascade = new Set(owed.flatMap((o) => o.noCascadeVehicleIds).filter((id) => !cascade.has(id)));
  return { cascadeVehicleIds: [...cascade], noCascadeVehicleIds: [...noCascade] };
}

export async function enqueueOwedEvaluations(queues: Queues, owed: OwedEvaluations): Promise<void> {
  await enqueueHealthEvaluations(queues, owed.cascadeVehicleIds, true);
  await enqueueHealthEvaluations(queues, owed.noCascadeVehicleIds, false);
}

/** Records locked per relay transaction: a backlog goes in a few round trips, each lock held briefly. */
const relayRows = 500;

export interface RelaySummary {
  /** Records enqueued and deleted. */
  records: number;
  /** Evaluations asked for (after merging: one per vehicle and flag). */
  evaluations: number;
}

/**
 * Enqueues the evaluations of records owed since before `graceMs` ago and deletes them. Each pass
 * locks its records (others' locked records are skipped, so relays in several processes take
 * disjoint ones), enqueues, and deletes them in the same transaction: a relay that dies before its
 * commit leaves them to the next.
 */
export async function relayOwedEvaluations(
  deps: { pool: Pool; queues: Queues },
  graceMs: number,
): Promise<RelaySummary> {
  const summary: RelaySummary = { records: 0, evaluations: 0 };
  for (;;) {
    const pass = await withTransaction(deps.pool, async (tx) => {
      const owed = await lockOwedEvaluations(tx, graceMs, relayRows);
      const merged = mergeOwedEvaluations(owed);
      await enqueueOwedEvaluations(deps.queues, merged);
      await deleteOwedEvaluations(
        tx,
        owed.map((o) => o.id),
      );
      return { records: owed.length, evaluations: merged.cascadeVehicleIds.length + merged.noCascadeVehicleIds.length };
    });
    summary.records += pass.records;
    summary.evaluations += pass.evaluations;
    if (pass.records < relayRows) return summary;
  }
}
