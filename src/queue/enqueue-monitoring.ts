/**
 * Monitoring delivery lanes (one per subscription, on the webhooks queue): a lane turn sends the
 * subscription's due deliveries. The schedule itself is in Postgres (`next_attempt_at`); these
 * jobs only say when to look, so a lost job costs at most the due sweep's interval, and an extra
 * job sends nothing twice (a delivery is claimed before its send).
 */
import type { Lane } from './enqueue-webhooks.js';
import type { Queues } from './queues.js';

/** A monitoring subscription's lane: the same shape as a core subscription's. */
export type MonitoringLane = Lane;

/**
 * Asks for a turn of each lane (now, or after `delayMs`): one job running and one waiting per
 * subscription at most (BullMQ deduplication), however many deliveries it owes.
 */
export async function requestMonitoringLanes(
  queues: Queues,
  lanes: readonly MonitoringLane[],
  delayMs = 0,
): Promise<void> {
  const bySubscription = new Map(lanes.map((lane) => [lane.subscriptionId, lane]));
  await queues.addBulk(
    'webhooks.monitoring-lane',
    [...bySubscription.values()].map((lane) => ({
      payload: { subscriptionId: lane.subscriptionId, companyId: lane.companyId },
      options: { deduplicationId: `monitoring-lane-${lane.subscriptionId}`, keepLastIfActive: true, delayMs },
    })),
  );
}

/**
 * Asks for a lane turn when a retry falls due. Its own job (not the lane's deduplicated one), so a
 * retry waiting minutes never holds back the lane's new events.
 */
export async function requestMonitoringRetries(
  queues: Queues,
  retries: ReadonlyArray<MonitoringLane & { deliveryId: string; dueAt: Date }>,
  now: Date,
): Promise<void> {
  await queues.addBulk(
    'webhooks.monitoring-lane',
    retries.map((retry) => ({
      payload: { subscriptionId: retry.subscriptionId, companyId: retry.companyId },
      options: {
        deduplicationId: `monitoring-retry-${retry.deliveryId}-${retry.dueAt.getTime()}`,
        delayMs: Math.max(0, retry.dueAt.getTime() - now.getTime()),
      },
    })),
  );
}
