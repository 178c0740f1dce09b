/** maintenance queue: housekeeping that keeps the database ready for incoming data. */
import type { Job } from 'bullmq';
import { ensureReadingPartitions } from '../src/db/readings.js';
import { parseJobPayload } from '../src/queue/catalog.js';
import type { WorkerDeps } from './worker-deps.js';

export function maintenanceProcessor(deps: WorkerDeps) {
  return async (job: Job): Promise<{ partitionsCreated: number }> => {
    parseJobPayload('maintenance.ensure-partitions', job.data);
    const partitionsCreated = await ensureReadingPartitions(deps.pool, deps.now());
    if (partitionsCreated > 0) deps.log.info({ partitionsCreated }, 'readings partitions created');
    return { partitionsCreated };
  };
}
