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
