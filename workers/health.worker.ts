/** health queue: one vehicle after new samples, and the periodic sweep over every vehicle. */
import type { Job } from 'bullmq';
import { listActiveVehicleIds } from '../src/db/health.js';
import { withTransaction } from '../src/db/pool.js';
import { evaluateVehicles } from '../src/health/evaluate-vehicles.js';
import { requestHealthConsumer } from '../src/health/enqueue.js';
import { parseJobPayload } from '../src/queue/catalog.js';
import type { WorkerDeps } from './worker-deps.js';

/** Vehicles per sweep transaction: small enough to keep row locks short. */
const sweepPageSize = 500;

export function healthProcessor(deps: WorkerDeps) {
  return async (job: Job): Promise<Record<string, unknown>> => {
    if (job.name === 'health.sweep') {
      parseJobPayload('health.sweep', job.data);
      let afterId: string | null = null;
      let evaluated = 0;
      let changed = 0;
      for (;;) {
        const ids = await listActiveVehicleIds(deps.pool, afterId, sweepPageSize);
        if (ids.length === 0) break;
        const summary = await withTransaction(deps.pool, (tx) => evaluateVehicles(tx, ids, deps.now(), { skipLocked: true, cascade: true }));
        evaluated += summary.evaluated;
        changed += summary.changed.length;
        if (summary.events > 0) await requestHealthConsumer(deps.queues);
        afterId = ids[ids.length - 1]!;
        await job.updateProgress({ evaluated });
      }
      return { evaluated, changed };
    }
    const { vehicleId, cascade } = parseJobPayload('health.evaluate', job.data);
    const summary = await withTransaction(deps.pool, (tx) => evaluateVehicles(tx, [vehicleId], deps.now(), { skipLocked: false, cascade }));
    if (summary.events > 0) await requestHealthConsumer(deps.queues);
    return { vehicleId, changed: summary.changed.length > 0, events: summary.events };
  };
}
