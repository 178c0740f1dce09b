/** pull queue: provider feeds on their schedules, on-demand vehicle refreshes, scheduler sync. */
import { DelayedError } from 'bullmq';
import { findVehiclePullTarget } from '../src/db/vehicles.js';
import {
  createPullDeps,
  pullFeed,
  pullSchedulesLive,
  pullVehicle,
  RateLimitedError,
  syncPullSchedules,
} from '../src/ingest/pulls.js';
import type { JobHandlers } from '../src/queue/handlers.js';
import type { ExtraSchedules } from '../src/queue/schedules.js';
import type { WorkerDeps } from './worker-deps.js';

/** The per-connection feed schedulers, checked with the catalog's and resynced as pull.sync-schedules does. */
export function pullSchedules(deps: WorkerDeps): ExtraSchedules {
  const pullDeps = createPullDeps(deps);
  return { allLive: () => pullSchedulesLive(pullDeps), restore: () => syncPullSchedules(pullDeps) };
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
