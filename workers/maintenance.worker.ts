/** maintenance queue: housekeeping that keeps the database ready for incoming data. */
import { ensureReadingPartitions } from '../src/db/readings.js';
import { purgeExpiredMonitoringHistory } from '../src/monitoring/retention.js';
import type { JobHandlers } from '../src/queue/handlers.js';
import type { WorkerDeps } from './worker-deps.js';

export function maintenanceHandlers(deps: WorkerDeps): JobHandlers<'maintenance'> {
  return {
    'maintenance.ensure-partitions': async () => {
      const partitionsCreated = await ensureReadingPartitions(deps.pool, deps.now());
      if (partitionsCreated > 0) deps.log.info({ partitionsCreated }, 'readings partitions created');
      return { partitionsCreated };
    },
    'maintenance.purge-monitoring': async () => {
      const result = await purgeExpiredMonitoringHistory(deps.pool, deps.now());
      if (result.purged > 0) deps.log.info(result, 'monitoring events past retention purged');
      return result;
    },
  };
}
