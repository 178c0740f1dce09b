/** pull queue: provider feeds on their schedules, on-demand vehicle refreshes, scheduler sync. */
import { DelayedError, type Job } from 'bullmq';
import { findVehiclePullTarget } from '../src/db/vehicles.js';
import { pullFeed, pullVehicle, RateLimitedError, syncPullSchedules, type PullDeps } from '../src/ingest/pulls.js';
import { parseJobPayload } from '../src/queue/catalog.js';
import type { WorkerDeps } from './worker-deps.js';

export function pullProcessor(deps: WorkerDeps) {
  const pullDeps: PullDeps = { ...deps, secretsKey: deps.config.secretsKey };
  return async (job: Job, token?: string): Promise<Record<string, unknown>> => {
    switch (job.name) {
      case 'pull.feed': {
        const { connectionId } = parseJobPayload('pull.feed', job.data);
        const result = await pullFeed(pullDeps, connectionId);
        return { pages: result.pages, outcome: result.outcome };
      }
      case 'pull.refresh': {
        const { vehicleId, refreshId, cascade } = parseJobPayload('pull.refresh', job.data);
        const target = await findVehiclePullTarget(deps.pool, vehicleId);
        if (!target?.connectionId || !target.providerVehicleId) return { refreshId, outcome: 'no_connection' };
        try {
          const inboxId = await pullVehicle(pullDeps, { connectionId: target.connectionId, providerVehicleId: target.providerVehicleId }, { refreshId, cascade });
          return { refreshId, inboxId };
        } catch (error) {
          if (!(error instanceof RateLimitedError)) throw error;
          // Honour the provider's Retry-After without spending an attempt.
          await job.moveToDelayed(Date.now() + error.retryAfterMs, token);
          throw new DelayedError();
        }
      }
      case 'pull.sync-schedules':
        parseJobPayload('pull.sync-schedules', job.data);
        return syncPullSchedules(pullDeps);
      default:
        throw new Error(`unknown job ${job.name} on the pull queue`);
    }
  };
}
