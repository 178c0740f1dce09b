/** runs queue: service requests from health events, dispatch proposals for new runs and their catch-up sweep. */
import type { Job } from 'bullmq';
import { withTransaction } from '../src/db/pool.js';
import { lockRun } from '../src/db/runs.js';
import {
  claimDispatchCheck, countOpenRunsByAssignee, listRoster, listRunsAwaitingDispatch, lockPendingHealthEvents, markHealthEventsConsumed,
} from '../src/db/runs-stage.js';
import { findRunLocations } from '../src/db/webhooks.js';
import { AppError } from '../src/errors.js';
import { parseJobPayload } from '../src/queue/catalog.js';
import { proposeDispatch } from '../src/runs/dispatch-assistant.js';
import { planHealthRequests } from '../src/runs/requests-from-health.js';
import { operateRun } from '../src/runs/run-operations.js';
import { submitServiceRequest } from '../src/runs/service-requests.js';
import { afterRunChanges, requestDispatch } from '../src/webhooks/queue.js';
import type { WorkerDeps } from './worker-deps.js';

const healthEventBatch = 200;
const dispatchGraceMs = 60_000;

export function runsProcessor(deps: WorkerDeps) {
  return async (job: Job): Promise<Record<string, unknown>> => {
    if (job.name === 'runs.dispatch') {
      const { companyId, runId } = parseJobPayload('runs.dispatch', job.data);
      const proposed = await withTransaction(deps.pool, async (tx) => {
        // Locked, so a proposal an operator records meanwhile is seen, not overwritten.
        const run = await lockRun(tx, companyId, runId);
        if (!run || !(await claimDispatchCheck(tx, runId))) return false;
        if (run.dispatchProposal || !['open', 'in_progress'].includes(run.status)) return false;
        const roster = await listRoster(tx, companyId);
        if (roster.length === 0) return false;
        const located = (await findRunLocations(tx, runId)).find((l) => l.location.latitude !== null && l.location.longitude !== null);
        const proposal = proposeDispatch({
          itemTypes: run.items.map((item) => item.type),
          location: located ? { latitude: located.location.latitude!, longitude: located.location.longitude! } : null,
          roster,
          openRunsByAssignee: await countOpenRunsByAssignee(tx, companyId),
        });
        if (!proposal) return false;
        await operateRun(tx, companyId, runId, { kind: 'dispatch_proposal', assignee: proposal.assignee, reason: proposal.reason }, deps.now());
        return true;
      });
      if (proposed) await afterRunChanges(deps.queues, deps.log, []);
      return { runId, proposed };
    }

    if (job.name === 'runs.dispatch-sweep') {
      parseJobPayload('runs.dispatch-sweep', job.data);
      // A minute's grace: the request made right after the run was created is normally running.
      const runs = await listRunsAwaitingDispatch(deps.pool, new Date(deps.now().getTime() - dispatchGraceMs), 1000);
      await requestDispatch(deps.queues, runs);
      return { requested: runs.length };
    }

    parseJobPayload('runs.from-health', job.data);
    let consumed = 0;
    let runsCreated = 0;
    for (;;) {
      const created: Array<{ companyId: string; runId: string }> = [];
      const batch = await withTransaction(deps.pool, async (tx) => {
        const events = await lockPendingHealthEvents(tx, healthEventBatch);
        const enabled = events.filter((e) => e.requestsEnabled);
        const requests = planHealthRequests(enabled, new Map(enabled.map((e) => [e.vehicleId, e.currentAlerts])));
        const companyOf = new Map(events.map((e) => [e.vehicleId, e.companyId]));
        // Vehicles in id order: service requests lock vehicle rows, and a fixed order avoids deadlocks.
        for (const [vehicleId, items] of [...requests].sort(([a], [b]) => (a < b ? -1 : 1))) {
          const companyId = companyOf.get(vehicleId)!;
          try {
            const outcome = await submitServiceRequest(tx, companyId, {
              vehicleId, title: 'Service requested by vehicle health', description: null, items,
              customer: null, preferredStart: null, preferredEnd: null, location: null,
            });
            if (!outcome.folded) created.push({ companyId, runId: outcome.runId });
          } catch (error) {
            // A deactivated vehicle gets no runs; anything else is a real failure.
            if (!(error instanceof AppError)) throw error;
          }
        }
        await markHealthEventsConsumed(tx, events.map((e) => e.id));
        return events.length;
      });
      consumed += batch;
      runsCreated += created.length;
      // After each commit: a later batch that fails must not hold back what this one created.
      if (created.length > 0) await afterRunChanges(deps.queues, deps.log, created);
      if (batch < healthEventBatch) break;
    }
    return { consumed, runsCreated };
  };
}
