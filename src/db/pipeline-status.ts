/** Backlogs of the pipeline's Postgres stages, for operators (GET /admin/v1/status, /metrics). */
import type { Queryable } from './pool.js';

export interface InboxBacklog {
  pendingRows: number;
  /** Age of the oldest row still waiting to be normalized: the ingest lag. 0 when none waits. */
  oldestPendingAgeSeconds: number;
  parkedRows: number;
}

export async function loadInboxBacklog(q: Queryable): Promise<InboxBacklog> {
  const { rows } = await q.query<InboxBacklog>(
    `SELECT
       (SELECT count(*) FROM ingest_inbox WHERE processed_at IS NULL AND parked_at IS NULL)::int AS "pendingRows",
       coalesce(extract(epoch FROM now() - (
         SELECT received_at FROM ingest_inbox WHERE processed_at IS NULL AND parked_at IS NULL ORDER BY id LIMIT 1
       )), 0)::float8 AS "oldestPendingAgeSeconds",
       (SELECT count(*) FROM ingest_inbox WHERE parked_at IS NOT NULL)::int AS "parkedRows"`,
  );
  return rows[0]!;
}

export interface DeliveryBacklog {
  /** Core deliveries pending or being sent. */
  coreOpen: number;
  /** Monitoring deliveries whose first attempt is owed, and those waiting for a retry. */
  monitoringPending: number;
  monitoringRetrying: number;
}

export async function loadDeliveryBacklog(q: Queryable): Promise<DeliveryBacklog> {
  const { rows } = await q.query<DeliveryBacklog>(
    `SELECT
       (SELECT count(*) FROM webhook_deliveries WHERE status IN ('pending', 'sending'))::int AS "coreOpen",
       -- Owed attempts only: the partial index of due deliveries, never a scan of the history.
       count(*) FILTER (WHERE status = 'pending')::int AS "monitoringPending",
       count(*) FILTER (WHERE status = 'retrying')::int AS "monitoringRetrying"
     FROM monitoring_deliveries WHERE next_attempt_at IS NOT NULL`,
  );
  return rows[0]!;
}
