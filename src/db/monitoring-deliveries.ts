/**
 * Read side of monitoring deliveries (DESIGN §11): the integrator's deliveries list with its
 * attempt timeline, and a subscription's endpoint health. The pipeline writes deliveries and
 * attempts (src/db/monitoring-delivery-queue.ts).
 */
import type { MonitoringKind } from '../monitoring/kinds.js';
import type { Queryable } from './pool.js';

export const monitoringDeliveryStatuses = ['pending', 'retrying', 'succeeded', 'failed'] as const;
export type MonitoringDeliveryStatus = (typeof monitoringDeliveryStatuses)[number];

export interface MonitoringAttemptRecord {
  /** When the attempt started. */
  at: Date;
  trigger: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

export interface MonitoringDeliveryRecord {
  id: string;
  eventId: string;
  event: MonitoringKind;
  status: MonitoringDeliveryStatus;
  attempts: MonitoringAttemptRecord[];
  nextAttemptAt: Date | null;
  createdAt: Date;
}

export interface MonitoringDeliveryFilter {
  status: MonitoringDeliveryStatus | null;
  event: MonitoringKind | null;
  /** Inclusive, on the delivery's created_at. */
  since: Date | null;
}

/** A subscription's deliveries, newest first, each with its attempts in order, in one statement. */
export async function listMonitoringDeliveries(
  q: Queryable,
  companyId: string,
  subscriptionId: string,
  filter: MonitoringDeliveryFilter,
  limit: number,
  offset: number,
): Promise<MonitoringDeliveryRecord[]> {
  const result = await q.query<Omit<MonitoringDeliveryRecord, 'attempts'> & { attempts: RawAttempt[] }>({
    name: 'list-monitoring-deliveries',
    text: `SELECT d.id, d.event_id AS "eventId", e.kind AS event, d.status, d.next_attempt_at AS "nextAttemptAt",
                  d.created_at AS "createdAt",
                  coalesce((SELECT json_agg(json_build_object(
                      'at', a.started_at, 'trigger', a.trigger, 'statusCode', a.status_code, 'error', a.error,
                      'durationMs', a.duration_ms) ORDER BY a.attempt_number)
                    FROM monitoring_attempts a WHERE a.delivery_id = d.id), '[]'::json) AS attempts
           FROM monitoring_deliveries d JOIN monitoring_events e ON e.id = d.event_id
           WHERE d.subscription_id = $1 AND d.company_id = $2
             AND ($3::text IS NULL OR d.status = $3) AND ($4::text IS NULL OR e.kind = $4)
             AND ($5::timestamptz IS NULL OR d.created_at >= $5)
           ORDER BY d.created_at DESC, d.id DESC LIMIT $6 OFFSET $7`,
    values: [subscriptionId, companyId, filter.status, filter.event, filter.since, limit, offset],
  });
  return result.rows.map((row) => ({
    ...row,
    attempts: row.attempts.map((a) => ({ ...a, at: new Date(a.at) })),
  }));
}

/** json_build_object gives timestamps as text. */
type RawAttempt = Omit<MonitoringAttemptRecord, 'at'> & { at: string };

export async function countMonitoringDeliveries(
  q: Queryable,
  companyId: string,
  subscriptionId: string,
  filter: MonitoringDeliveryFilter,
): Promise<number> {
  const result = await q.query<{ n: number }>({
    name: 'count-monitoring-deliveries',
    text: `SELECT count(*)::int AS n
           FROM monitoring_deliveries d JOIN monitoring_events e ON e.id = d.event_id
           WHERE d.subscription_id = $1 AND d.company_id = $2
             AND ($3::text IS NULL OR d.status = $3) AND ($4::text IS NULL OR e.kind = $4)
             AND ($5::timestamptz IS NULL OR d.created_at >= $5)`,
    values: [subscriptionId, companyId, filter.status, filter.event, filter.since],
  });
  return result.rows[0]!.n;
}

/** How many of the newest attempts the success rate covers. */
export const endpointHealthWindow = 100;

export interface EndpointHealthRecord {
  /** Attempts in the window (at most `endpointHealthWindow`). */
  attempts: number;
  /** Of those, the ones the receiver answered with a 2xx. */
  successes: number;
  lastSuccessAt: Date | null;
  lastFailure: { at: Date; statusCode: number | null; error: string | null } | null;
}

/**
 * A subscription's endpoint health from its recorded attempts, in one statement: successes among
 * the newest `endpointHealthWindow` attempts, and the newest success and failure of all those kept
 * (retention purges old deliveries with their attempts). A failure is any attempt without a 2xx:
 * another status, a network error, a timeout, an attempt lost with its worker.
 */
export async function loadEndpointHealth(q: Queryable, subscriptionId: string): Promise<EndpointHealthRecord> {
  const result = await q.query<{
    attempts: number;
    successes: number;
    lastSuccessAt: Date | null;
    failureAt: Date | null;
    failureStatusCode: number | null;
    failureError: string | null;
  }>({
    name: 'load-endpoint-health',
    text: `WITH attempts AS (
             SELECT a.started_at, a.status_code, a.error, coalesce(a.status_code BETWEEN 200 AND 299, false) AS succeeded
             FROM monitoring_deliveries d JOIN monitoring_attempts a ON a.delivery_id = d.id
             WHERE d.subscription_id = $1
           ), recent AS (
             SELECT succeeded FROM attempts ORDER BY started_at DESC LIMIT $2
           ), last_failure AS (
             SELECT started_at, status_code, error FROM attempts WHERE NOT succeeded ORDER BY started_at DESC LIMIT 1
           )
           SELECT (SELECT count(*)::int FROM recent) AS attempts,
                  (SELECT count(*)::int FROM recent WHERE succeeded) AS successes,
                  (SELECT max(started_at) FROM attempts WHERE succeeded) AS "lastSuccessAt",
                  f.started_at AS "failureAt", f.status_code AS "failureStatusCode", f.error AS "failureError"
           FROM (SELECT) AS one LEFT JOIN last_failure f ON true`,
    values: [subscriptionId, endpointHealthWindow],
  });
  const row = result.rows[0]!;
  return {
    attempts: row.attempts,
    successes: row.successes,
    lastSuccessAt: row.lastSuccessAt,
    lastFailure: row.failureAt
      ? { at: row.failureAt, statusCode: row.failureStatusCode, error: row.failureError }
      : null,
  };
}
