/** health queue: one vehicle after new samples, the relay of evaluations owed by ingest, and the periodic sweep over every vehicle. */
import { withTransaction } from '../src/db/pool.js';
import { evaluateVehicles, sweepHealth } from '../src/evaluation/evaluate-vehicles.js';
import { requestAfterEvaluation } from '../src/queue/enqueue-health.js';
import { relayOwedEvaluations } from '../src/ingest/owed-evaluations.js';
import type { EvaluationSummary } from '../src/evaluation/evaluate-vehicles.js';
import type { JobHandlers } from '../src/queue/handlers.js';
import type { WorkerDeps } from './worker-deps.js';

export function healthHandlers(deps: WorkerDeps): JobHandlers<'health'> {
  /** After an evaluation committed: count the monitoring events, ask for the runs stage and the lanes. */
  const afterEvaluation = async (summary: EvaluationSummary) => {
    for (const kind of summary.monitoringKinds) deps.metrics.monitoringEventsDetected.inc({ kind });
    await requestAfterEvaluation(deps.queues, deps.log, summary);
  };
  return {
    'health.evaluate': async ({ vehicleId, cascade }) => {
      const evaluate = (locking: 'to-write' | 'first') =>
        withTransaction(deps.pool, (tx) => evaluateVehicles(tx, [vehicleId], deps.now(), { locking, cascade }));
      // Locked only to write; when what it read moved meanwhile, again with the vehicle locked throughout.
      const optimistic = await evaluate('to-write');
      const summary = optimistic.moved ? await evaluate('first') : optimistic;
      await afterEvaluation(summary);
      return {
        vehicleId,
        changed: summary.changed.length > 0,
        events: summary.events,
        monitoringEvents: summary.monitoringKinds.length,
        lockedThroughout: optimistic.moved,
      };
    },
    'health.relay': async () => {
      const relayed = await relayOwedEvaluations(deps, deps.config.healthRelayIntervalMs);
      if (relayed.records > 0)
        deps.log.info(relayed, 'enqueued health evaluations owed by ingest batches whose own enqueue never came');
      return relayed;
    },
    'health.sweep': async (_payload, job) => {
      let evaluated = 0;
      return sweepHealth(deps.pool, deps.now, deps.config.healthSweepConcurrentPages, async (page) => {
        await afterEvaluation(page);
        evaluated += page.evaluated;
        await job.updateProgress({ evaluated });
      });
    },
  };
}
