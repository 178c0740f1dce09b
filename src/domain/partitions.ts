/**
 * Retention of the monthly `readings` partitions: a partition goes once every row it can hold is
 * older than the retention, i.e. when its month ended `retentionMonths` whole months before the
 * current one began. 0 keeps everything.
 */
export function expiredPartitions<P extends { month: string }>(
  partitions: readonly P[],
  now: Date,
  retentionMonths: number,
): P[] {
  if (retentionMonths === 0) return [];
  const oldestKept = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - retentionMonths, 1));
  return partitions.filter((p) => new Date(`${p.month}T00:00:00Z`) < oldestKept);
}

const dayMs = 24 * 60 * 60 * 1000;

/** Days the request log keeps (DESIGN §12, "Requests"): a week, whole days by partition. */
export const requestLogRetentionDays = 7;

/**
 * Retention of the daily `api_request_log` partitions: a day goes once it ended more than
 * `retentionDays` days ago, so the last `retentionDays` days are always whole.
 */
export function expiredDayPartitions<P extends { day: string }>(
  partitions: readonly P[],
  now: Date,
  retentionDays: number,
): P[] {
  return partitions.filter((p) => Date.parse(`${p.day}T00:00:00Z`) + dayMs <= now.getTime() - retentionDays * dayMs);
}
