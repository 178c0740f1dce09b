/** maintenance queue: housekeeping that keeps the database ready for incoming data. */
import { deleteExpiredIdempotencyKeys } from '../src/db/idempotency.js';
import { ensureReadingPartitions } from '../src/db/readings.js';
import type { JobHandlers } from '../src/queue/handlers.js';
import type { WorkerDeps } from './worker-deps.js';

export function maintenanceHandlers(deps: WorkerDeps): JobHandlers<'maintenance'> {
  return {
    'maintenance.ensure-partitions': async () => {
      const partitionsCreated = await ensureReadingPartitions(deps.pool, deps.now());
      if (partitionsCreated > 0) deps.log.info({ partitionsCreated }, 'readings partitions created');
      return { partitionsCreated };
    },
    'maintenance.purge-idempotency-keys': async () => {
      const keysDeleted = await deleteExpiredIdempotencyKeys(deps.pool, deps.now());
      return { keysDeleted };
    },
  };
}
