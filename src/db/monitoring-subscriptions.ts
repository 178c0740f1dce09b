/**
 * Statements of the monitoring subscriptions API (docs/monitoring.md). A subscription is deleted softly:
 * the row stays (metering bills every month a vehicle was monitored, and the integrator can still
 * read its deliveries) with deleted_at set, and detection skips it from then on.
 */
import type { MonitoringKind, MonitoringTier, StoredMonitoringOptions } from '../domain/monitoring-kinds.js';
import { keysetPageSql } from './keyset-page-sql.js';
import type { Queryable } from './pool.js';

export interface MonitoringSubscriptionRecord {
  id: string;
  companyId: string;
  vehicleId: string;
  webhookUrl: string;
  events: MonitoringKind[];
  tier: MonitoringTier;
  /** As answered: every option, defaults filled in. */
  options: Required<StoredMonitoringOptions>;
  createdAt: Date;
  deletedAt: Date | null;
}

const columns = `id, company_id AS "companyId", vehicle_id AS "vehicleId", webhook_url AS "webhookUrl", events, tier,
  options, created_at AS "createdAt", deleted_at AS "deletedAt"`;

export async function insertMonitoringSubscription(
  q: Queryable,
  s: Omit<MonitoringSubscriptionRecord, 'id' | 'createdAt' | 'deletedAt'> & { secretCiphertext: Buffer },
): Promise<MonitoringSubscriptionRecord> {
  const result = await q.query<MonitoringSubscriptionRecord>(
    `INSERT INTO monitoring_subscriptions (company_id, vehicle_id, webhook_url, events, tier, options, secret_ciphertext)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${columns}`,
    [s.companyId, s.vehicleId, s.webhookUrl, s.events, s.tier, JSON.stringify(s.options), s.secretCiphertext],
  );
  return result.rows[0]!;
}

/** One subscription of the company, deleted or not (a deleted one answers with status "deleted"). */
export async function findMonitoringSubscription(
  q: Queryable,
  companyId: string,
  id: string,
): Promise<MonitoringSubscriptionRecord | null> {
  const result = await q.query<MonitoringSubscriptionRecord>(
    `SELECT ${columns} FROM monitoring_subscriptions WHERE id = $1 AND company_id = $2`,
    [id, companyId],
  );
  return result.rows[0] ?? null;
}

export interface MonitoringSubscriptionFilter {
  /** Live subscriptions, or deleted ones. */
  deleted: boolean;
  vehicleId: string | null;
}

export async function listMonitoringSubscriptions(
  q: Queryable,
  companyId: string,
  filter: MonitoringSubscriptionFilter,
  limit: number,
  offset: number,
): Promise<MonitoringSubscriptionRecord[]> {
  const result = await q.query<MonitoringSubscriptionRecord>(
    `SELECT ${columns} FROM monitoring_subscriptions
     WHERE company_id = $1 AND (deleted_at IS NOT NULL) = $2 AND ($3::uuid IS NULL OR vehicle_id = $3)
     ORDER BY created_at DESC, id DESC LIMIT $4 OFFSET $5`,
    [companyId, filter.deleted, filter.vehicleId, limit, offset],
  );
  return result.rows;
}

/**
 * A page of the company's live subscriptions next to the cursor row (its creation time and id),
 * newest first: older ones for 'next', newer ones for 'previous' (the newest when the cursor is
 * null). Times are compared to the millisecond, the precision a cursor carries through a JavaScript Date.
 */
export async function listLiveMonitoringSubscriptionsPage(
  q: Queryable,
  companyId: string,
  direction: 'next' | 'previous',
  cursor: { createdAt: Date; id: string } | null,
  limit: number,
): Promise<MonitoringSubscriptionRecord[]> {
  const result = await q.query<MonitoringSubscriptionRecord>(
    keysetPageSql(
      {
        table: 'monitoring_subscriptions',
        matching: 'company_id = $1 AND deleted_at IS NULL',
        time: "date_trunc('milliseconds', created_at)",
        id: 'id',
        idType: 'uuid',
        firstParam: 2,
      },
      columns,
    ),
    [companyId, direction, cursor?.createdAt ?? null, cursor?.id ?? null, limit],
  );
  return result.rows;
}

/** The list's total; with `{deleted: false, vehicleId: null}`, the count the per-company cap checks. */
export async function countMonitoringSubscriptions(
  q: Queryable,
  companyId: string,
  filter: MonitoringSubscriptionFilter,
): Promise<number> {
  const result = await q.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM monitoring_subscriptions
     WHERE company_id = $1 AND (deleted_at IS NOT NULL) = $2 AND ($3::uuid IS NULL OR vehicle_id = $3)`,
    [companyId, filter.deleted, filter.vehicleId],
  );
  return result.rows[0]!.n;
}

/** Soft delete of a live subscription; null when there is none (unknown, another company's, already deleted). */
export async function deleteMonitoringSubscription(
  q: Queryable,
  companyId: string,
  id: string,
): Promise<MonitoringSubscriptionRecord | null> {
  const result = await q.query<MonitoringSubscriptionRecord>(
    `UPDATE monitoring_subscriptions SET deleted_at = clock_timestamp()
     WHERE id = $1 AND company_id = $2 AND deleted_at IS NULL RETURNING ${columns}`,
    [id, companyId],
  );
  return result.rows[0] ?? null;
}
