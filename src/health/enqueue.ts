import type { Queues } from '../queue/queues.js';

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

/** Asks the runs stage to consume new health events (deduplicated; one run kept behind a running one). */
export async function requestHealthConsumer(queues: Queues): Promise<void> {
  await queues.add('runs.from-health', {}, { deduplicationId: 'runs-from-health', keepLastIfActive: true });
}
