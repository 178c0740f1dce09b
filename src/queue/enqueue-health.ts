import type { Logger } from '../log.js';
import { enqueueAfterCommit } from './after-commit.js';
import { requestMonitoringLanes, type MonitoringLane } from './enqueue-monitoring.js';
import { requestHealthConsumer } from './enqueue-runs.js';
import type { Queues } from './queues.js';

/**
 * Queues one health evaluation per vehicle. Deduplicated per vehicle and cascade flag: many
 * batches for a vehicle collapse into one run, and one more is kept when samples arrive mid-run.
 */
export async function enqueueHealthEvaluations(
  queues: Queues,
  vehicleIds: readonly string[],
  cascade: boolean,
): Promise<void> {
  await queues.addBulk(
    'health.evaluate',
    vehicleIds.map((vehicleId) => ({
      payload: { vehicleId, cascade },
      options: { deduplicationId: `health-${vehicleId}-${cascade ? 'c' : 'n'}`, keepLastIfActive: true },
    })),
  );
}

/**
 * After an evaluation committed (a job's, a sweep page's, a transfer's): asks the runs stage to
 * consume its health events and the monitoring lanes to send its deliveries. A lost ask is only
 * logged: `runs.from-health` and `webhooks.monitoring-recover` repeat and catch up.
 */
export async function requestAfterEvaluation(
  queues: Queues,
  log: Pick<Logger, 'warn'>,
  summary: { events: number; monitoringLanes: readonly MonitoringLane[] },
): Promise<void> {
  if (summary.events > 0) await enqueueAfterCommit(log, 'runs.from-health', () => requestHealthConsumer(queues));
  if (summary.monitoringLanes.length > 0)
    await enqueueAfterCommit(log, 'webhooks.monitoring-recover', () =>
      requestMonitoringLanes(queues, summary.monitoringLanes),
    );
}
