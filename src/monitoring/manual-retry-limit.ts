/**
 * The limits on manual retries of one monitoring delivery (issue 16). Each manual retry adds an
 * outbound POST and an attempt row, so a delivery gets at most `perHour` of them in any rolling
 * hour and `perDelivery` over its life (MONITORING_MANUAL_RETRIES_PER_HOUR and _PER_DELIVERY).
 * Pure: the caller decides and records while it holds the delivery's row lock, so two concurrent
 * retries are decided one after the other.
 */

export interface ManualRetryLimits {
  /** In any rolling hour. */
  perHour: number;
  /** Over the delivery's life. */
  perDelivery: number;
}

export const manualRetryWindowMs = 3_600_000;

export interface ManualRetryHistory {
  /** Manual retries the delivery has had, in all. */
  total: number;
  /** When the recent ones were accepted (times older than the window may be among them: ignored). */
  recentAt: readonly Date[];
}

export type ManualRetryVerdict =
  /** `recentAt`: what to store, the window's retries and this one, oldest first. */
  { kind: 'allowed'; recentAt: Date[] } | { kind: 'too_frequent'; retryAfterSeconds: number } | { kind: 'exhausted' };

export function decideManualRetry(
  history: ManualRetryHistory,
  limits: ManualRetryLimits,
  now: Date,
): ManualRetryVerdict {
  if (history.total >= limits.perDelivery) return { kind: 'exhausted' };
  const windowStartMs = now.getTime() - manualRetryWindowMs;
  const recent = history.recentAt
    .map((at) => at.getTime())
    .filter((at) => at > windowStartMs)
    .sort((a, b) => a - b);
  if (recent.length >= limits.perHour) {
    // Room comes back when enough of them have left the hour: the one that brings the count under
    // the limit is the (count - limit + 1)th oldest; the oldest when the count is at the limit.
    const freedAtMs = recent[recent.length - limits.perHour]! + manualRetryWindowMs;
    return { kind: 'too_frequent', retryAfterSeconds: (freedAtMs - now.getTime()) / 1000 };
  }
  return { kind: 'allowed', recentAt: [...recent.map((at) => new Date(at)), now] };
}
