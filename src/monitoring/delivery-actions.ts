/**
 * The integrator's delivery actions (DESIGN §11), shared by the API routes
 * (src/api/routes/monitoring-delivery-actions.ts) and the web console's Retry button:
 * - retry: one more attempt of a delivery now (trigger `manual`); a 2xx marks it succeeded.
 * - recover: every failed delivery of a subscription created since a time, inside the tier's
 *   retention window, gets one more attempt now (trigger `recover`).
 * Both only make the deliveries due in Postgres and then ask for the lane; if Redis is away the
 * due sweep sends them.
 */
import { requestManualMonitoringRetry, requestMonitoringRecover } from '../db/monitoring-delivery-queue.js';
import { findMonitoringSubscription } from '../db/monitoring-subscriptions.js';
import type { Pool } from '../db/pool.js';
import { msPerDay } from '../domain/units.js';
import type { Logger } from '../log.js';
import { enqueueAfterCommit } from '../queue/after-commit.js';
import type { Queues } from '../queue/queues.js';
import { tierRetentionDays } from './kinds.js';
import { requestMonitoringLanes } from './lanes.js';

export interface DeliveryActionDeps {
  pool: Pool;
  queues: Queues;
  log: Pick<Logger, 'warn'>;
  now: () => Date;
}

export interface RetryAccepted {
  deliveryId: string;
  /** False when an attempt of it was already being sent: that attempt is the one more. */
  queued: boolean;
}

/** Null for an unknown id or another company's (the caller answers 404). */
export async function retryMonitoringDelivery(
  deps: DeliveryActionDeps,
  companyId: string,
  deliveryId: string,
): Promise<RetryAccepted | null> {
  const delivery = await requestManualMonitoringRetry(deps.pool, companyId, deliveryId, deps.now());
  if (!delivery) return null;
  if (!delivery.sending) {
    await enqueueAfterCommit(deps.log, 'webhooks.monitoring-recover', () =>
      requestMonitoringLanes(deps.queues, [{ subscriptionId: delivery.subscriptionId, companyId }]),
    );
  }
  return { deliveryId: delivery.id, queued: !delivery.sending };
}

export interface RecoverAccepted {
  subscriptionId: string;
  /** The effective start: `since`, or the start of the tier's retention window if later. */
  since: Date;
  queued: number;
}

/** Null for an unknown subscription or another company's. A deleted subscription queues nothing. */
export async function recoverMonitoringDeliveries(
  deps: DeliveryActionDeps,
  companyId: string,
  subscriptionId: string,
  since: Date,
): Promise<RecoverAccepted | null> {
  const subscription = await findMonitoringSubscription(deps.pool, companyId, subscriptionId);
  if (!subscription) return null;
  const now = deps.now();
  const retainedFrom = new Date(now.getTime() - tierRetentionDays[subscription.tier] * msPerDay);
  const from = since.getTime() > retainedFrom.getTime() ? since : retainedFrom;
  const queued = await requestMonitoringRecover(deps.pool, companyId, subscription.id, from, now);
  if (queued > 0) {
    await enqueueAfterCommit(deps.log, 'webhooks.monitoring-recover', () =>
      requestMonitoringLanes(deps.queues, [{ subscriptionId: subscription.id, companyId }]),
    );
  }
  return { subscriptionId: subscription.id, since: from, queued };
}
