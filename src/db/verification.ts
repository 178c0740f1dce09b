/** What an instant verification reads beyond the vehicle row (docs/verification.md). */
import type { Queryable } from './pool.js';

/** The latest maintenance of the vehicle: a completed run or an operator service entry. */
export async function findLastMaintenanceAt(q: Queryable, vehicleId: string): Promise<Date | null> {
  const result = await q.query<{ at: Date | null }>({
    name: 'find-last-maintenance-at',
    text: `SELECT greatest(
             (SELECT max(completed_at) FROM runs WHERE vehicle_id = $1 AND status = 'completed'),
             (SELECT max(performed_at) FROM service_entries WHERE vehicle_id = $1)
           ) AS at`,
    values: [vehicleId],
  });
  return result.rows[0]?.at ?? null;
}
