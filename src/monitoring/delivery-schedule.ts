/**
 * What a monitoring delivery owes after one attempt (docs/monitoring.md
 * "Delivery and retries"). Pure: the delivery worker records the attempt and this result together.
 *
 * - Scheduled attempts: the initial one, then one after each wait of MONITORING_RETRY_DELAYS_MS
 *   (at most 1 + delays, so 4 by default). A 2xx ends it (`succeeded`); the last failure ends it
 *   (`failed`).
 * - A send whose worker died (`worker_lost`) may have reached the receiver: it counts as the
 *   attempt it was, so a crash loop can never make a 5th scheduled attempt.
 * - Manual (POST /v1/deliveries/:id/retry) and recover attempts are one more attempt each: they
 *   never use up the schedule. A 2xx marks the delivery succeeded; a failure leaves a finished
 *   delivery as it was and, while scheduled attempts remain, restarts the wait before the next.
 * - A delivery whose subscription is gone is settled `failed` with nothing more owed.
 */
import type { MonitoringDeliveryStatus } from '../db/monitoring-deliveries.js';
import type { OwedTrigger } from '../db/monitoring-delivery-queue.js';

export type AttemptOutcome = 'succeeded' | 'failed' | 'worker_lost';

export interface DeliveryProgress {
  status: MonitoringDeliveryStatus;
  /** Scheduled attempts made before this one. */
  scheduledAttempts: number;
}

export interface AfterAttempt extends DeliveryProgress {
  nextAttemptAt: Date | null;
  /** The delivery is finished (succeeded, or failed with nothing scheduled). */
  completed: boolean;
}

export function afterAttempt(
  before: DeliveryProgress,
  attempt: { trigger: OwedTrigger; outcome: AttemptOutcome; final?: boolean },
  retryDelaysMs: readonly number[],
  now: Date,
): AfterAttempt {
  const scheduledAttempts = before.scheduledAttempts + (attempt.trigger === 'scheduled' ? 1 : 0);
  if (attempt.outcome === 'succeeded') {
    return { status: 'succeeded', scheduledAttempts, nextAttemptAt: null, completed: true };
  }
  if (before.status === 'succeeded') {
    // A resend to an endpoint that already acknowledged the event does not undo that.
    return { status: 'succeeded', scheduledAttempts, nextAttemptAt: null, completed: true };
  }
  if (!attempt.final && scheduledAttempts < 1 + retryDelaysMs.length) {
    const waitMs = scheduledAttempts === 0 ? 0 : retryDelaysMs[scheduledAttempts - 1]!;
    return {
      status: scheduledAttempts === 0 ? 'pending' : 'retrying',
      scheduledAttempts,
      nextAttemptAt: new Date(now.getTime() + waitMs),
      completed: false,
    };
  }
  return { status: 'failed', scheduledAttempts, nextAttemptAt: null, completed: true };
}
