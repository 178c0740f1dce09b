/**
 * The request log's part of the daily `maintenance.ensure-partitions` job: daily partitions of
 * `api_request_log` a week ahead, and days past the 7 kept dropped whole (no DELETE, no vacuum).
 */
import {
  dropApiRequestLogPartition,
  ensureApiRequestLogPartitions,
  listApiRequestLogPartitions,
} from '../db/api-request-log.js';
import type { Pool } from '../db/pool.js';
import { expiredDayPartitions, requestLogRetentionDays } from '../domain/partitions.js';
import type { Logger } from '../log.js';

export async function maintainRequestLogPartitions(deps: {
  pool: Pool;
  log: Pick<Logger, 'info'>;
  now: () => Date;
}): Promise<{ requestLogPartitionsCreated: number; requestLogPartitionsDropped: number }> {
  const requestLogPartitionsCreated = await ensureApiRequestLogPartitions(deps.pool, deps.now());
  const expired = expiredDayPartitions(
    await listApiRequestLogPartitions(deps.pool),
    deps.now(),
    requestLogRetentionDays,
  );
  for (const { name } of expired) await dropApiRequestLogPartition(deps.pool, name);
  if (expired.length > 0) deps.log.info({ dropped: expired.map((p) => p.name) }, 'request log partitions dropped');
  return { requestLogPartitionsCreated, requestLogPartitionsDropped: expired.length };
}
