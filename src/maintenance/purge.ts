/**
 * The hourly purges of the maintenance queue (docs/operations.md "Postgres"): rows past their
 * retention, in batches (src/db/batched-delete.ts).
 */
import type { Config } from '../config.js';
import { deleteAuditEventsBefore } from '../db/audit-events.js';
import { deleteInBatches } from '../db/batched-delete.js';
import { deleteExpiredIdempotencyKeys } from '../db/idempotency.js';
import { deleteProcessedInboxRows } from '../db/inbox.js';
import type { Pool } from '../db/pool.js';
import { deleteSettledWebhookHistory } from '../db/webhooks.js';
import { auditRetentionDays, retentionCutoff } from '../domain/retention.js';
import type { Logger } from '../log.js';
import { purgeExpiredMonitoringHistory } from '../monitoring/retention.js';

export interface PurgeDeps {
  pool: Pool;
  config: Pick<Config, 'inboxRetentionDays' | 'webhookRetentionDays'>;
  log: Pick<Logger, 'info'>;
  now: () => Date;
}

/**
 * `maintenance.purge-expired`: processed inbox rows past INBOX_RETENTION_DAYS, settled core
 * webhook history past WEBHOOK_RETENTION_DAYS, audit events past their 365 days, and the console
 * flashes nobody will read. The
 * console's purge (src/console/flash.ts) is handed in: the console sits above this folder.
 */
export async function purgeExpired(
  deps: PurgeDeps,
  purgeUnreadConsoleFlashes: () => Promise<number>,
): Promise<{
  inboxRowsDeleted: number;
  webhookEventsDeleted: number;
  consoleFlashesDeleted: number;
  auditEventsDeleted: number;
}> {
  const inboxBefore = retentionCutoff(deps.now(), deps.config.inboxRetentionDays);
  const webhooksBefore = retentionCutoff(deps.now(), deps.config.webhookRetentionDays);
  const inboxRowsDeleted = inboxBefore
    ? await deleteInBatches((limit) => deleteProcessedInboxRows(deps.pool, inboxBefore, limit))
    : 0;
  const webhookEventsDeleted = webhooksBefore
    ? await deleteInBatches((limit) => deleteSettledWebhookHistory(deps.pool, webhooksBefore, limit))
    : 0;
  const consoleFlashesDeleted = await purgeUnreadConsoleFlashes();
  const auditBefore = retentionCutoff(deps.now(), auditRetentionDays)!;
  const auditEventsDeleted = await deleteInBatches((limit) => deleteAuditEventsBefore(deps.pool, auditBefore, limit));
  if (inboxRowsDeleted + webhookEventsDeleted + consoleFlashesDeleted + auditEventsDeleted > 0)
    deps.log.info(
      { inboxRowsDeleted, webhookEventsDeleted, consoleFlashesDeleted, auditEventsDeleted },
      'inbox rows, webhook history and audit events past retention, and unread console flashes, purged',
    );
  return { inboxRowsDeleted, webhookEventsDeleted, consoleFlashesDeleted, auditEventsDeleted };
}

/** `maintenance.purge-monitoring`: monitoring events past their tier's retention (src/monitoring/retention.ts). */
export async function purgeMonitoring(deps: Pick<PurgeDeps, 'pool' | 'log' | 'now'>): Promise<{ purged: number }> {
  const result = await purgeExpiredMonitoringHistory(deps.pool, deps.now());
  if (result.purged > 0) deps.log.info(result, 'monitoring events past retention purged');
  return result;
}

/** `maintenance.purge-idempotency-keys`: Idempotency-Key answers past their 24 hours. */
export async function purgeIdempotencyKeys(deps: Pick<PurgeDeps, 'pool' | 'now'>): Promise<{ keysDeleted: number }> {
  const keysDeleted = await deleteExpiredIdempotencyKeys(deps.pool, deps.now());
  return { keysDeleted };
}
