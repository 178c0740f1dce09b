/** Health evaluations owed by committed ingest transactions (migrations/0025_health_evaluations_owed.sql). */
import type { Queryable } from './pool.js';

/** The vehicles one ingest transaction owes an evaluation, by cascade flag (a vehicle is in one list). */
export interface OwedEvaluations {
  cascadeVehicleIds: string[];
  noCascadeVehicleIds: string[];
}

/** Records what the caller's transaction owes; answers the row's id, for the delete once enqueued. */
export async function insertOwedEvaluations(q: Queryable, owed: OwedEvaluations): Promise<number> {
  const result = await q.query<{ id: number }>({
    name: 'insert-owed-evaluations',
    text: `INSERT INTO health_evaluations_owed (cascade_vehicle_ids, no_cascade_vehicle_ids)
           VALUES ($1::uuid[], $2::uuid[]) RETURNING id`,
    values: [owed.cascadeVehicleIds, owed.noCascadeVehicleIds],
  });
  return result.rows[0]!.id;
}

export async function deleteOwedEvaluations(q: Queryable, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  await q.query({
    name: 'delete-owed-evaluations',
    text: `DELETE FROM health_evaluations_owed WHERE id = ANY($1::bigint[])`,
    values: [ids],
  });
}

/**
 * Locks up to `limit` of the oldest rows owed for at least `graceMs` (younger ones may still be on
 * their way to the queue). Rows another relay holds are skipped, so relays take disjoint rows.
 * The age is measured on the database's clock, which wrote `owed_at`: a process whose clock runs
 * ahead would otherwise take rows still on their way, one running behind would leave rows late.
 */
export async function lockOwedEvaluations(
  q: Queryable,
  graceMs: number,
  limit: number,
): Promise<Array<OwedEvaluations & { id: number }>> {
  const result = await q.query<OwedEvaluations & { id: number }>({
    name: 'lock-owed-evaluations',
    text: `SELECT id, cascade_vehicle_ids AS "cascadeVehicleIds", no_cascade_vehicle_ids AS "noCascadeVehicleIds"
           FROM health_evaluations_owed WHERE owed_at < clock_timestamp() - make_interval(secs => $1 / 1000.0)
           ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED`,
    values: [graceMs, limit],
  });
  return result.rows;
}
