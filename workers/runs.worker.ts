/** runs queue: service requests from health events, dispatch proposals for new runs and their catch-up sweep. */
import type { JobHandlers } from '../src/queue/handlers.js';
import { consumeHealthEvents } from '../src/runs/consume-health-events.js';
import { proposeDispatchForRun, requestLostDispatches } from '../src/runs/dispatch-run.js';
import { afterRunChanges } from '../src/queue/enqueue-runs.js';
import type { WorkerDeps } from './worker-deps.js';

export function runsHandlers(deps: WorkerDeps): JobHandlers<'runs'> {
  return {
    'runs.from-health': () =>
      consumeHealthEvents(deps.pool, (created) => afterRunChanges(deps.queues, deps.log, created)),
    'runs.dispatch': async ({ companyId, runId }) => {
      const proposed = await proposeDispatchForRun(deps.pool, companyId, runId, deps.now());
      if (proposed) await afterRunChanges(deps.queues, deps.log, []);
      return { runId, proposed };
    },
    'runs.dispatch-sweep': async () => ({ requested: await requestLostDispatches(deps.pool, deps.queues, deps.now()) }),
  };
}
