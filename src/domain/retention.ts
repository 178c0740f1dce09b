/** Retention in days (INBOX_RETENTION_DAYS, WEBHOOK_RETENTION_DAYS, the audit log's): what is old enough to go. */

const dayMs = 24 * 60 * 60 * 1000;

/** Days the audit log keeps a company's events (DESIGN §12, "Activity"). */
export const auditRetentionDays = 365;

/** Rows from before this time are past a retention of `days` days; null when 0 keeps all. */
export function retentionCutoff(now: Date, days: number): Date | null {
  return days > 0 ? new Date(now.getTime() - days * dayMs) : null;
}
