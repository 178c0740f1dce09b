/** health queue: one vehicle after new samples, and the periodic sweep over every vehicle. */
import { withTransaction } from '../src/db/pool.js';
import { evaluateVehicles, sweepHealth } from '../src/health/evaluate-vehicles.js';
import { requestHealthConsumer } from '../src/health/enqueue.js';
import type { JobHandlers } from '../src/queue/handlers.js';
import type { WorkerDeps } from './worker-deps.js';

export function healthHandlers(deps: WorkerDeps): JobHandlers<'health'> {
  return {
    'health.evaluate': async ({ vehicleId, cascade }) => {
      const summary = await withTransaction(deps.pool, (tx) =>
        evaluateVehicles(tx, [vehicleId], deps.now(), { skipLocked: false, cascade }),
      );
      if (summary.events > 0) await requestHealthConsumer(deps.queues);
      return { vehicleId, changed: summary.changed.length > 0, events: summary.events };
    },
    'health.sweep': async (_payload, job) => {
      let evaluated = 0;
      return sweepHealth(deps.pool, deps.now, async (page) => {
        if (page.events > 0) await requestHealthConsumer(deps.queues);
        evaluated += page.evaluated;
        await job.updateProgress({ evaluated });
      });
    },
  };
}
