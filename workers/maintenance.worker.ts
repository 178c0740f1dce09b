/** maintenance queue: housekeeping that keeps the database ready for incoming data. */
import { purgeUnreadFlashes } from '../src/console/flash.js';
import { deleteInBatches } from '../src/db/batched-delete.js';
import { deleteExpiredIdempotencyKeys } from '../src/db/idempotency.js';
import { deleteProcessedInboxRows } from '../src/db/inbox.js';
import { dropReadingPartition, ensureReadingPartitions, listReadingPartitions } from '../src/db/readings.js';
import { deleteSettledWebhookHistory } from '../src/db/webhooks.js';
import { expiredPartitions } from '../src/domain/partitions.js';
import { retentionCutoff } from '../src/domain/retention.js';
import { purgeExpiredMonitoringHistory } from '../src/monitoring/retention.js';
import type { JobHandlers } from '../src/queue/handlers.js';
import type { WorkerDeps } from './worker-deps.js';

export function maintenanceHandlers(deps: WorkerDeps): JobHandlers<'maintenance'> {
  return {
    'maintenance.ensure-partitions': async () => {
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
    },
    'maintenance.purge-monitoring': async () => {
      const result = await purgeExpiredMonitoringHistory(deps.pool, deps.now());
      if (result.purged > 0) deps.log.info(result, 'monitoring events past retention purged');
      return result;
    },
    'maintenance.purge-expired': async () => {
      const inboxBefore = retentionCutoff(deps.now(), deps.config.inboxRetentionDays);
      const webhooksBefore = retentionCutoff(deps.now(), deps.config.webhookRetentionDays);
      const inboxRowsDeleted = inboxBefore
        ? await deleteInBatches((limit) => deleteProcessedInboxRows(deps.pool, inboxBefore, limit))
        : 0;
      const webhookEventsDeleted = webhooksBefore
        ? await deleteInBatches((limit) => deleteSettledWebhookHistory(deps.pool, webhooksBefore, limit))
        : 0;
      const consoleFlashesDeleted = await purgeUnreadFlashes(deps.pool, deps.config, deps.now());
      if (inboxRowsDeleted + webhookEventsDeleted + consoleFlashesDeleted > 0)
        deps.log.info(
          { inboxRowsDeleted, webhookEventsDeleted, consoleFlashesDeleted },
          'inbox rows and webhook history past retention, and unread console flashes, purged',
        );
      return { inboxRowsDeleted, webhookEventsDeleted, consoleFlashesDeleted };
    },
    'maintenance.purge-idempotency-keys': async () => {
      const keysDeleted = await deleteExpiredIdempotencyKeys(deps.pool, deps.now());
      return { keysDeleted };
    },
  };
}
