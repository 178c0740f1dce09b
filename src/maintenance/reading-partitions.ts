/**
 * The daily `maintenance.ensure-partitions` job (docs/operations.md "Postgres"): creates the
 * coming months' `readings` partitions and drops those past READINGS_RETENTION_MONTHS.
 */
import type { Config } from '../config.js';
import type { Pool } from '../db/pool.js';
import { dropReadingPartition, ensureReadingPartitions, listReadingPartitions } from '../db/readings.js';
import { expiredPartitions } from '../domain/partitions.js';
import type { Logger } from '../log.js';

export async function maintainReadingPartitions(deps: {
  pool: Pool;
  config: Pick<Config, 'readingsRetentionMonths'>;
  log: Pick<Logger, 'info'>;
  now: () => Date;
}): Promise<{ partitionsCreated: number; partitionsDropped: number }> {
  const partitionsCreated = await ensureReadingPartitions(deps.pool, deps.now());
  if (partitionsCreated > 0) deps.log.info({ partitionsCreated }, 'readings partitions created');
  const expired = expiredPartitions(
    await listReadingPartitions(deps.pool),
    deps.now(),
    deps.config.readingsRetentionMonths,
  );
  for (const { name } of expired) await dropReadingPartition(deps.pool, name);
  if (expired.length > 0) deps.log.info({ dropped: expired.map((p) => p.name) }, 'readings partitions dropped');
  return { partitionsCreated, partitionsDropped: expired.length };
}
