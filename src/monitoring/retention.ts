/**
 * Retention by tier (docs/monitoring.md): events older than 30, 90 or 365 days
 * (basic, standard, premium) are deleted with their deliveries and attempts. Run hourly by
 * `maintenance.purge-monitoring`, in batches (src/db/batched-delete.ts).
 */
import { deleteInBatches } from '../db/batched-delete.js';
import { purgeMonitoringHistory } from '../db/monitoring-delivery-queue.js';
import type { Pool } from '../db/pool.js';
import { tierRetentionDays } from '../domain/monitoring-kinds.js';

export async function purgeExpiredMonitoringHistory(pool: Pool, now: Date): Promise<{ purged: number }> {
  const purged = await deleteInBatches((limit) => purgeMonitoringHistory(pool, now, tierRetentionDays, limit));
  return { purged };
}
