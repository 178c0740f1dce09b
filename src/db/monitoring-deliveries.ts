/**
 * Read side of monitoring deliveries (docs/monitoring.md): the integrator's deliveries list with its
 * attempt timeline, and a subscription's endpoint health, each reading a bounded number of
 * attempts. The pipeline writes deliveries and attempts (src/db/monitoring-delivery-queue.ts).
 */
import type { MonitoringKind } from '../domain/monitoring-kinds.js';
import { cursorTimeOf } from './cursor-time.js';
import { keysetPageRows } from './keyset-page-sql.js';
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
  /** The newest `attemptsListed` attempts, oldest first. */
  attempts: MonitoringAttemptRecord[];
  /** Every attempt made, those not listed included. */
  attemptCount: number;
  nextAttemptAt: Date | null;
  createdAt: Date;
}

export interface MonitoringDeliveryFilter {
  status: MonitoringDeliveryStatus | null;
  event: MonitoringKind | null;
  /** Inclusive, on the delivery's created_at. */
  since: Date | null;
}

/**
 * Attempts listed per delivery, the newest (core and monitoring lists, API and console): a
 * delivery retried many times still reads and answers a bounded row.
 */
export const attemptsListed = 10;

/**
 * A subscription's deliveries, newest first, each with its newest `attemptsListed` attempts in
 * order and its attempt count, in one statement. The page is chosen first, so only its deliveries'
 * attempts are read (through the attempts' key, newest first); attempts are numbered from 1
 * without gaps, so the newest number is the count.
 */
export async function listMonitoringDeliveries(
  q: Queryable,
  companyId: string,
  subscriptionId: string,
  filter: MonitoringDeliveryFilter,
  limit: number,
  offset: number,
): Promise<MonitoringDeliveryRecord[]> {
  const result = await q.query<RawDelivery>({
    name: 'list-monitoring-deliveries',
    text: `SELECT p.*, a.attempts, a.count AS "attemptCount"
           FROM (
             SELECT d.id, d.event_id AS "eventId", e.kind AS event, d.status, d.next_attempt_at AS "nextAttemptAt",
                    d.created_at AS "createdAt"
             FROM monitoring_deliveries d JOIN monitoring_events e ON e.id = d.event_id
             WHERE d.subscription_id = $1 AND d.company_id = $2
               AND ($3::text IS NULL OR d.status = $3) AND ($4::text IS NULL OR e.kind = $4)
               AND ($5::timestamptz IS NULL OR d.created_at >= $5)
             ORDER BY d.created_at DESC, d.id DESC LIMIT $6 OFFSET $7
           ) p
           ${attemptsOfPage(8)}
           ORDER BY p."createdAt" DESC, p.id DESC`,
    values: [subscriptionId, companyId, filter.status, filter.event, filter.since, limit, offset, attemptsListed],
  });
  return result.rows.map(withAttemptTimes);
}

/**
 * A page of a subscription's deliveries with the status `status` (any when null) next to the
 * cursor row (its `created_at` to the microsecond, and id), newest first:
 * older ones for 'next', newer ones for 'previous' (the newest when the cursor is null), with their
 * attempts as listMonitoringDeliveries gives them; the page is a range scan of
 * monitoring_deliveries_subscription_page.
 */
export async function listMonitoringDeliveriesPage(
  q: Queryable,
  companyId: string,
  subscriptionId: string,
  status: MonitoringDeliveryStatus | null,
  direction: 'next' | 'previous',
  cursor: { at: string; id: string } | null,
  limit: number,
): Promise<Array<MonitoringDeliveryRecord & { cursorAt: string }>> {
  const page = keysetPageRows({
    table: 'monitoring_deliveries',
    matching: `subscription_id = $1 AND company_id = $2 AND ($3::text IS NULL OR status = $3)`,
    time: 'created_at',
    id: 'id',
    idType: 'uuid',
    firstParam: 4,
  });
  const result = await q.query<RawDelivery & { cursorAt: string }>({
    name: 'list-monitoring-deliveries-page',
    text: `SELECT p.*, a.attempts, a.count AS "attemptCount"
           FROM (
             SELECT d.id, d.event_id AS "eventId", e.kind AS event, d.status, d.next_attempt_at AS "nextAttemptAt",
                    d.created_at AS "createdAt", ${cursorTimeOf('d.created_at')} AS "cursorAt"
             FROM ${page} d
             JOIN monitoring_events e ON e.id = d.event_id
           ) p
           ${attemptsOfPage(8)}
           ORDER BY p."createdAt" DESC, p.id DESC`,
    values: [
      subscriptionId,
      companyId,
      status,
      direction,
      cursor?.at ?? null,
      cursor?.id ?? null,
      limit,
      attemptsListed,
    ],
  });
  return result.rows.map(withAttemptTimes);
}

/**
 * The attempts of each delivery of a page `p`: the newest `$<attemptsParam>` of them, oldest first,
 * read newest first through their key, and the delivery's attempt count.
 */
function attemptsOfPage(attemptsParam: number): string {
  return `CROSS JOIN LATERAL (
             SELECT coalesce(json_agg(json_build_object(
                        'at', n.started_at, 'trigger', n.trigger, 'statusCode', n.status_code, 'error', n.error,
                        'durationMs', n.duration_ms) ORDER BY n.attempt_number), '[]'::json) AS attempts,
                    coalesce(max(n.attempt_number), 0) AS count
             FROM (SELECT * FROM monitoring_attempts WHERE delivery_id = p.id ORDER BY attempt_number DESC LIMIT $${attemptsParam}) n
           ) a`;
}

/** json_build_object gives timestamps as text. */
type RawAttempt = Omit<MonitoringAttemptRecord, 'at'> & { at: string };
type RawDelivery = Omit<MonitoringDeliveryRecord, 'attempts'> & { attempts: RawAttempt[] };

function withAttemptTimes<Row extends RawDelivery>(row: Row): Omit<Row, 'attempts'> & MonitoringDeliveryRecord {
  return { ...row, attempts: row.attempts.map((a) => ({ ...a, at: new Date(a.at) })) };
}

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

/**
 * Endpoint health covers the subscription's attempts started in the last `hours`, the newest
 * `attempts` of them at most: read through the attempts' (subscription, started_at) index
 * (migrations/0026), whatever the subscription's history.
 */
export const endpointHealthWindow = { hours: 24, attempts: 100 } as const;

export interface EndpointHealthRecord {
  /** Attempts in the window (at most `endpointHealthWindow.attempts`). */
  attempts: number;
  /** Of those, the ones the receiver answered with a 2xx. */
  successes: number;
  /** The newest success and failure in the window. */
  lastSuccessAt: Date | null;
  lastFailure: { at: Date; statusCode: number | null; error: string | null } | null;
}

/**
 * A subscription's endpoint health from its attempts in the window (`endpointHealthWindow`, back
 * from `now`), in one statement. A failure is any attempt without a 2xx: another status, a network
 * error, a timeout, an attempt lost with its worker.
 */
export async function loadEndpointHealth(
  q: Queryable,
  subscriptionId: string,
  now: Date,
): Promise<EndpointHealthRecord> {
  const result = await q.query<{
    attempts: number;
    successes: number;
    lastSuccessAt: Date | null;
    failureAt: Date | null;
    failureStatusCode: number | null;
    failureError: string | null;
  }>({
    name: 'load-endpoint-health',
    text: `WITH recent AS (
             SELECT started_at, status_code, error, coalesce(status_code BETWEEN 200 AND 299, false) AS succeeded
             FROM monitoring_attempts
             WHERE subscription_id = $1 AND started_at > $2
             ORDER BY started_at DESC LIMIT $3
           ), last_failure AS (
             SELECT started_at, status_code, error FROM recent WHERE NOT succeeded ORDER BY started_at DESC LIMIT 1
           )
           SELECT (SELECT count(*)::int FROM recent) AS attempts,
                  (SELECT count(*)::int FROM recent WHERE succeeded) AS successes,
                  (SELECT max(started_at) FROM recent WHERE succeeded) AS "lastSuccessAt",
                  f.started_at AS "failureAt", f.status_code AS "failureStatusCode", f.error AS "failureError"
           FROM (SELECT) AS one LEFT JOIN last_failure f ON true`,
    values: [
      subscriptionId,
      new Date(now.getTime() - endpointHealthWindow.hours * 3_600_000),
      endpointHealthWindow.attempts,
    ],
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
