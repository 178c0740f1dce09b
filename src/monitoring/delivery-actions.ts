/**
 * The integrator's delivery actions (docs/monitoring.md), shared by the API routes
 * (src/api/routes/monitoring-delivery-actions.ts) and the web console's Retry button:
 * - retry: one more attempt of a delivery now (trigger `manual`); a 2xx marks it succeeded.
 * - recover: every failed delivery of a subscription created since a time, inside the tier's
 *   retention window, gets one more attempt now (trigger `recover`).
 * Both count as manual retries of each delivery, within the limits of ./manual-retry-limit.ts.
 * Both only make the deliveries due in Postgres and then ask for the lane; if Redis is away the
 * due sweep sends them.
 */
import type { Config } from '../config.js';
import {
  lockDeliveryForManualRetry,
  lockMonitoringRecoverCandidates,
  queueManualMonitoringRetries,
  type ManualRetryRecord,
} from '../db/monitoring-delivery-queue.js';
import { findMonitoringSubscription } from '../db/monitoring-subscriptions.js';
import { withTransaction, type Pool } from '../db/pool.js';
import { isRecordId } from '../domain/ids.js';
import { msPerDay } from '../domain/units.js';
import { AppError, rateLimited } from '../errors.js';
import type { Logger } from '../log.js';
import { enqueueAfterCommit } from '../queue/after-commit.js';
import type { Queues } from '../queue/queues.js';
import { tierRetentionDays } from '../domain/monitoring-kinds.js';
import { requestMonitoringLanes } from '../queue/enqueue-monitoring.js';
import { decideManualRetry, type ManualRetryLimits } from './manual-retry-limit.js';

export interface DeliveryActionDeps {
  pool: Pool;
  queues: Queues;
  log: Pick<Logger, 'warn'>;
  now: () => Date;
  config: Pick<Config, 'monitoringManualRetriesPerHour' | 'monitoringManualRetriesPerDelivery'>;
}

export interface RetryAccepted {
  deliveryId: string;
  /** False when an attempt of it was already being sent: that attempt is the one more. */
  queued: boolean;
}

function manualRetryLimits(config: DeliveryActionDeps['config']): ManualRetryLimits {
  return { perHour: config.monitoringManualRetriesPerHour, perDelivery: config.monitoringManualRetriesPerDelivery };
}

/**
 * Null for an unknown id, one that is no record id, or another company's (the caller answers
 * 404). Past the delivery's limits it throws 429 RATE_LIMITED (with the seconds until a retry is
 * allowed) or, once the lifetime limit is used up, 409 LIMIT_REACHED. A retry while an attempt is being sent is not
 * counted: that attempt is the one more.
 */
export async function retryMonitoringDelivery(
  deps: DeliveryActionDeps,
  companyId: string,
  deliveryId: string,
): Promise<RetryAccepted | null> {
  if (!isRecordId(deliveryId)) return null;
  const now = deps.now();
  const limits = manualRetryLimits(deps.config);
  const delivery = await withTransaction(deps.pool, async (tx) => {
    const target = await lockDeliveryForManualRetry(tx, companyId, deliveryId);
    if (!target || target.sending) return target;
    const verdict = decideManualRetry({ total: target.manualRetries, recentAt: target.manualRetriedAt }, limits, now);
    if (verdict.kind === 'exhausted') {
      throw new AppError(
        'LIMIT_REACHED',
        `manual retries of this delivery are limited to ${limits.perDelivery} in all, and it has had them`,
        { resource: 'manual_retries', limit: limits.perDelivery },
      );
    }
    if (verdict.kind === 'too_frequent') {
      throw rateLimited(
        verdict.retryAfterSeconds,
        `manual retries of this delivery are limited to ${limits.perHour} per hour; ` +
          `retry after ${Math.ceil(verdict.retryAfterSeconds)} seconds`,
      );
    }
    await queueManualMonitoringRetries(tx, 'manual', now, [{ deliveryId: target.id, recentAt: verdict.recentAt }]);
    return target;
  });
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

/**
 * Deliveries one recover call looks at, at most: their rows are locked while each is decided, so
 * the transaction stays short however many failed (a vehicle's 15 s incident cooldowns allow
 * thousands a day). The oldest first; what a call leaves, the next one takes.
 */
const recoverDeliveriesPerCall = 1_000;

/**
 * Null for an unknown subscription, an id that is no record id, or another company's. A deleted
 * subscription queues nothing; neither does a delivery that has used up its manual retries
 * (hourly or in all): each candidate is decided by decideManualRetry, as a retry is, under its
 * row lock.
 */
export async function recoverMonitoringDeliveries(
  deps: DeliveryActionDeps,
  companyId: string,
  subscriptionId: string,
  since: Date,
): Promise<RecoverAccepted | null> {
  if (!isRecordId(subscriptionId)) return null;
  const subscription = await findMonitoringSubscription(deps.pool, companyId, subscriptionId);
  if (!subscription) return null;
  const now = deps.now();
  const retainedFrom = new Date(now.getTime() - tierRetentionDays[subscription.tier] * msPerDay);
  const from = since.getTime() > retainedFrom.getTime() ? since : retainedFrom;
  const limits = manualRetryLimits(deps.config);
  const queued = await withTransaction(deps.pool, async (tx) => {
    const candidates = await lockMonitoringRecoverCandidates(
      tx,
      companyId,
      subscription.id,
      from,
      recoverDeliveriesPerCall,
    );
    const retries: ManualRetryRecord[] = [];
    for (const candidate of candidates) {
      const history = { total: candidate.manualRetries, recentAt: candidate.manualRetriedAt };
      const verdict = decideManualRetry(history, limits, now);
      if (verdict.kind === 'allowed') retries.push({ deliveryId: candidate.id, recentAt: verdict.recentAt });
    }
    return queueManualMonitoringRetries(tx, 'recover', now, retries);
  });
  if (queued > 0) {
    await enqueueAfterCommit(deps.log, 'webhooks.monitoring-recover', () =>
      requestMonitoringLanes(deps.queues, [{ subscriptionId: subscription.id, companyId }]),
    );
  }
  return { subscriptionId: subscription.id, since: from, queued };
}
