/** pull queue: provider feeds on their schedules, on-demand vehicle refreshes, scheduler sync. */
import { DelayedError } from 'bullmq';
import { findVehiclePullTarget } from '../src/db/vehicles.js';
import { createPullDeps, pullFeed, pullVehicle, RateLimitedError, syncPullSchedules } from '../src/ingest/pulls.js';
import type { JobHandlers } from '../src/queue/handlers.js';
import type { WorkerDeps } from './worker-deps.js';

/** Recreates the per-connection feed schedulers now (what pull.sync-schedules does every 5 minutes). */
export function resyncPullSchedules(deps: WorkerDeps): Promise<unknown> {
  return syncPullSchedules(createPullDeps(deps));
}

export function pullHandlers(deps: WorkerDeps): JobHandlers<'pull'> {
  const pullDeps = createPullDeps(deps);
  return {
    'pull.feed': async ({ connectionId }) => {
      const result = await pullFeed(pullDeps, connectionId);
      return { pages: result.pages, outcome: result.outcome };
    },
    'pull.refresh': async ({ vehicleId, refreshId, cascade }, job, token) => {
      const target = await findVehiclePullTarget(deps.pool, vehicleId);
      if (!target?.connectionId || !target.providerVehicleId) return { refreshId, outcome: 'no_connection' };
      try {
        const inboxId = await pullVehicle(
          pullDeps,
          { connectionId: target.connectionId, providerVehicleId: target.providerVehicleId },
          { refreshId, cascade },
        );
        return { refreshId, inboxId };
      } catch (error) {
        if (!(error instanceof RateLimitedError)) throw error;
        // Honour the provider's Retry-After without spending an attempt.
        await job.moveToDelayed(Date.now() + error.retryAfterMs, token);
        throw new DelayedError();
      }
    },
    'pull.sync-schedules': () => syncPullSchedules(pullDeps),
  };
}
