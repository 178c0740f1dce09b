/**
 * The monitoring metering record (docs/monitoring.md "Retention and metering"): a monitored vehicle is billed
 * once for each month in which it had a live subscription, at the highest tier it had that month.
 * Subscriptions are deleted softly, so their rows answer for every past month.
 */
import type { MonitoringTier } from '../domain/monitoring-kinds.js';
import type { Queryable } from './pool.js';

/**
 * The company's vehicles monitored at any time in `month` ('YYYY-MM', UTC), each with the highest
 * tier among its subscriptions live during that month (created before its end, not deleted
 * before its start), in vehicle id order.
 */
export async function monitoredVehiclesOfMonth(
  q: Queryable,
  companyId: string,
  month: string,
): Promise<Array<{ vehicleId: string; tier: MonitoringTier }>> {
  if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(month)) throw new RangeError(`month must be YYYY-MM, got ${month}`);
  const result = await q.query<{ vehicleId: string; tier: MonitoringTier }>({
    name: 'monitored-vehicles-of-month',
    text: `WITH bounds AS (
             SELECT ($2::text || '-01')::timestamp AT TIME ZONE 'UTC' AS starts,
                    (($2::text || '-01')::timestamp + interval '1 month') AT TIME ZONE 'UTC' AS ends
           )
           SELECT DISTINCT ON (s.vehicle_id) s.vehicle_id AS "vehicleId", s.tier
           FROM monitoring_subscriptions s, bounds b
           WHERE s.company_id = $1 AND s.created_at < b.ends AND (s.deleted_at IS NULL OR s.deleted_at >= b.starts)
           ORDER BY s.vehicle_id, CASE s.tier WHEN 'premium' THEN 3 WHEN 'standard' THEN 2 ELSE 1 END DESC`,
    values: [companyId, month],
  });
  return result.rows;
}
