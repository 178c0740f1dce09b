/**
 * What monitoring bills (DESIGN §11): a vehicle is billed once for each UTC month in which it had
 * a live subscription, at the highest tier it had that month. A deleted subscription keeps its row
 * (deleted_at) for exactly this.
 */
import type { Queryable } from './pool.js';

export type MonitoringTier = 'basic' | 'standard' | 'premium';

/** `month` is YYYY-MM (UTC). */
export async function monitoredVehiclesOfMonth(
  q: Queryable,
  companyId: string,
  month: string,
): Promise<Array<{ vehicleId: string; tier: MonitoringTier }>> {
  const result = await q.query<{ vehicleId: string; tier: MonitoringTier }>({
    name: 'monitored-vehicles-of-month',
    text: `WITH bounds AS (
             SELECT (($2 || '-01')::date::timestamp AT TIME ZONE 'UTC') AS starts,
                    ((($2 || '-01')::date + interval '1 month')::timestamp AT TIME ZONE 'UTC') AS ends
           )
           SELECT s.vehicle_id AS "vehicleId",
                  (array_agg(s.tier ORDER BY array_position(ARRAY['basic', 'standard', 'premium'], s.tier) DESC))[1] AS tier
           FROM monitoring_subscriptions s, bounds b
           WHERE s.company_id = $1 AND s.created_at < b.ends AND (s.deleted_at IS NULL OR s.deleted_at >= b.starts)
           GROUP BY s.vehicle_id ORDER BY s.vehicle_id`,
    values: [companyId, month],
  });
  return result.rows;
}
