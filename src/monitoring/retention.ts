/**
 * Retention by tier (spec/001 Monitoring tiers, DESIGN §11): events older than 30, 90 or 365 days
 * (basic, standard, premium) are deleted with their deliveries and attempts. Run hourly by
 * `maintenance.purge-monitoring`, in batches so no statement holds many row locks for long.
 */
import { purgeMonitoringHistory } from '../db/monitoring-delivery-queue.js';
import type { Pool } from '../db/pool.js';
import { tierRetentionDays } from './kinds.js';

const purgeBatch = 5_000;

export async function purgeExpiredMonitoringHistory(pool: Pool, now: Date): Promise<{ purged: number }> {
  let purged = 0;
  for (;;) {
    const batch = await purgeMonitoringHistory(pool, now, tierRetentionDays, purgeBatch);
    purged += batch;
    if (batch < purgeBatch) return { purged };
  }
}
