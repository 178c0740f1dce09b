/** maintenance queue: housekeeping that keeps the database ready for incoming data. */
import { purgeUnreadFlashes } from '../src/console/flash.js';
import { purgeExpired, purgeIdempotencyKeys, purgeMonitoring } from '../src/maintenance/purge.js';
import { maintainReadingPartitions } from '../src/maintenance/reading-partitions.js';
import { maintainRequestLogPartitions } from '../src/maintenance/request-log-partitions.js';
import type { JobHandlers } from '../src/queue/handlers.js';
import type { WorkerDeps } from './worker-deps.js';

export function maintenanceHandlers(deps: WorkerDeps): JobHandlers<'maintenance'> {
  return {
    'maintenance.ensure-partitions': async () => ({
      ...(await maintainReadingPartitions(deps)),
      ...(await maintainRequestLogPartitions(deps)),
    }),
    'maintenance.purge-monitoring': () => purgeMonitoring(deps),
    'maintenance.purge-expired': () => purgeExpired(deps, () => purgeUnreadFlashes(deps.pool, deps.config, deps.now())),
    'maintenance.purge-idempotency-keys': () => purgeIdempotencyKeys(deps),
  };
}
