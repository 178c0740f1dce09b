/** health queue: one vehicle after new samples, and the periodic sweep over every vehicle. */
import type { Job } from 'bullmq';
import { withTransaction } from '../src/db/pool.js';
import { evaluateVehicles, sweepHealth } from '../src/health/evaluate-vehicles.js';
import { requestHealthConsumer } from '../src/health/enqueue.js';
import { parseJobPayload } from '../src/queue/catalog.js';
import type { WorkerDeps } from './worker-deps.js';

export function healthProcessor(deps: WorkerDeps) {
  return async (job: Job): Promise<Record<string, unknown>> => {
    if (job.name === 'health.sweep') {
      parseJobPayload('health.sweep', job.data);
      let evaluated = 0;
      return sweepHealth(deps.pool, deps.now, async (page) => {
        if (page.events > 0) await requestHealthConsumer(deps.queues);
        evaluated += page.evaluated;
        await job.updateProgress({ evaluated });
      });
    }
    const { vehicleId, cascade } = parseJobPayload('health.evaluate', job.data);
    const summary = await withTransaction(deps.pool, (tx) => evaluateVehicles(tx, [vehicleId], deps.now(), { skipLocked: false, cascade }));
    if (summary.events > 0) await requestHealthConsumer(deps.queues);
    return { vehicleId, changed: summary.changed.length > 0, events: summary.events };
  };
}
