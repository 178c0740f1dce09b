/**
 * Monitoring deliveries, one lane turn at a time (docs/monitoring.md "Delivery and retries"):
 * claim a subscription's due deliveries as their sends start, POST each stored body unchanged
 * with `X-Service-Signature: sha256=<hex>` through the same SSRF-guarded client as core delivery
 * (redirects refused, one deadline, 16 KiB read), record every attempt with what the delivery
 * owes next (delivery-schedule.ts), and ask for a lane turn when each retry falls due.
 */
import { performance } from 'node:perf_hooks';
import {
  claimDueMonitoringDeliveries,
  recordMonitoringAttempts,
  type ClaimedMonitoringDelivery,
  type MonitoringAttemptWrite,
} from '../db/monitoring-delivery-queue.js';
import { deliveryOptions, turnSecrets, type DeliveryDeps } from '../delivery/deps.js';
import { LaneSlots } from '../delivery/lane-slots.js';
import { deferMs, laneTurnMs } from '../delivery/lane-timing.js';
import { signMonitoringBody } from '../delivery/sign.js';
import { enqueueAfterCommit } from '../queue/after-commit.js';
import { deliverOnce, storableText, type DeliveryResult } from '../http/client.js';
import { afterAttempt } from './delivery-schedule.js';
import { requestMonitoringLanes, requestMonitoringRetries, type MonitoringLane } from '../queue/enqueue-monitoring.js';

export interface MonitoringDeliveryDeps extends DeliveryDeps {
  /** MONITORING_RETRY_DELAYS_MS. */
  retryDelaysMs: readonly number[];
}

export interface MonitoringLaneTurn {
  outcomes: MonitoringAttemptOutcome[];
  /** The lane's company already held its share of this process's slots: nothing was sent; the lane comes back later. */
  deferred: boolean;
}

export interface MonitoringAttemptOutcome {
  trigger: MonitoringAttemptWrite['trigger'];
  succeeded: boolean;
  durationMs: number;
}

/** Deliveries claimed (and then sent in parallel) at once: one receiver gets at most this many requests at a time. */
const claimBatch = 32;

/** The attempt's `error` text: null after a 2xx, else what went wrong ("HTTP 503", "no complete response within 10000 ms"). */
export function attemptError(result: DeliveryResult): string | null {
  if (result.ok) return null;
  return result.errorMessage ?? result.errorCode;
}

export function monitoringDeliverer(deps: MonitoringDeliveryDeps) {
  const options = deliveryOptions(deps);

  async function attempt(delivery: ClaimedMonitoringDelivery, secretOf: (sealed: Buffer) => string) {
    const startedAt = deps.now();
    const settle = (outcome: 'succeeded' | 'failed', final: boolean, fields: Partial<MonitoringAttemptWrite>) => ({
      succeeded: outcome === 'succeeded',
      deliveryId: delivery.id,
      trigger: delivery.trigger,
      startedAt,
      durationMs: 0,
      statusCode: null,
      error: null,
      ...fields,
      ...afterAttempt(
        { status: delivery.status, scheduledAttempts: delivery.scheduledAttempts },
        { trigger: delivery.trigger, outcome, final },
        deps.retryDelaysMs,
        deps.now(),
      ),
    });
    if (delivery.subscriptionDeleted) {
      return settle('failed', true, {
        error: 'subscription_deleted: the subscription was deleted before the delivery was sent',
      });
    }
    let secret: string;
    try {
      secret = secretOf(delivery.secretCiphertext);
    } catch (error) {
      // A stored secret that no longer decrypts never will: recorded, and nothing more is owed.
      return settle('failed', true, {
        error: storableText(`internal_error: the delivery could not be signed: ${(error as Error).message}`),
      });
    }
    const body = Buffer.from(delivery.body, 'utf8');
    const result = await deliverOnce(
      {
        url: delivery.url,
        body,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'fleet-monitoring/1.0',
          'x-service-signature': signMonitoringBody(secret, body),
        },
      },
      options,
    );
    if (result.refusedReason !== null) {
      deps.log.warn(
        { deliveryId: delivery.id, address: result.resolvedIp, reason: result.refusedReason },
        'monitoring delivery refused by the SSRF guard',
      );
    }
    return settle(result.ok ? 'succeeded' : 'failed', false, {
      durationMs: result.durationMs,
      statusCode: result.status,
      error: attemptError(result),
    });
  }

  const slots = deps.slots ?? new LaneSlots();

  /**
   * One turn of a subscription's lane: sends its due deliveries, a batch at a time, for at most
   * `laneTurnMs`. It needs one of the process's lane slots, shared with core lanes
   * (src/delivery/lane-slots.ts); a lane that gets none asks again after `deferMs`.
   */
  return async function deliverMonitoringLane(lane: MonitoringLane): Promise<MonitoringLaneTurn> {
    if (!slots.tryTake(lane.companyId)) {
      await requestMonitoringLanes(deps.queues, [lane], deferMs);
      return { outcomes: [], deferred: true };
    }
    try {
      return { outcomes: await turn(lane), deferred: false };
    } finally {
      slots.release(lane.companyId);
    }
  };

  async function turn(lane: MonitoringLane): Promise<MonitoringAttemptOutcome[]> {
    const endsAt = performance.now() + laneTurnMs;
    const outcomes: MonitoringAttemptOutcome[] = [];
    const secretOf = turnSecrets(deps.secretsKey);
    let more = false;
    while (performance.now() < endsAt) {
      const claimed = await claimDueMonitoringDeliveries(deps.pool, lane.subscriptionId, deps.now(), claimBatch);
      if (claimed.length === 0) break;
      const attempts = await Promise.all(claimed.map((delivery) => attempt(delivery, secretOf)));
      const recorded = new Set(await recordMonitoringAttempts(deps.pool, attempts));
      const retries = attempts
        .filter((a) => recorded.has(a.deliveryId) && a.nextAttemptAt !== null)
        .map((a) => ({ ...lane, deliveryId: a.deliveryId, dueAt: a.nextAttemptAt! }));
      // The retries are due in Postgres already; a lost request is caught by the due sweep.
      await enqueueAfterCommit(deps.log, 'webhooks.monitoring-recover', () =>
        requestMonitoringRetries(deps.queues, retries, deps.now()),
      );
      for (const a of attempts) {
        if (!recorded.has(a.deliveryId)) continue;
        outcomes.push({ trigger: a.trigger, succeeded: a.succeeded, durationMs: a.durationMs });
      }
      more = claimed.length === claimBatch;
      if (!more) break;
    }
    // Work left when the turn ended: the lane goes to the back of the queue behind the others.
    if (more) {
      await enqueueAfterCommit(deps.log, 'webhooks.monitoring-recover', () =>
        requestMonitoringLanes(deps.queues, [lane]),
      );
    }
    return outcomes;
  }
}
