/**
 * Write side of monitoring (issue 9): the detection stage's subscriptions, detector state, events
 * and deliveries; the delivery lanes' claims and attempt records; manual retry, recover, the
 * recovery sweep and the retention purge. Postgres holds the whole schedule (`next_attempt_at`),
 * so a restart or a Redis loss neither drops nor repeats an attempt: an attempt is made only by
 * the sender whose claim (`sending_since`) set it, and a claim is cleared only by its record.
 */
import type { MonitoringKind, MonitoringTier, StoredMonitoringOptions } from '../domain/monitoring-kinds.js';
import type { EventSample } from '../domain/sample.js';
import type { MonitoringDeliveryStatus } from './monitoring-deliveries.js';
import { ownedSinceSql } from './ownership.js';
import type { Queryable } from './pool.js';

/** A live subscription as the detection stage reads it. */
export interface MonitoredSubscription {
  id: string;
  companyId: string;
  vehicleId: string;
  events: MonitoringKind[];
  tier: MonitoringTier;
  options: StoredMonitoringOptions;
  detectorState: Record<string, unknown>;
  createdAt: Date;
  /** The ids of its company's live geofences, in order: the worker's fence cache is valid while it matches. */
  fenceSignature: string;
}

/** A new provider event, and whether a refresh without cascade stored it (the detectors pass over those). */
export interface NewEventSample extends EventSample {
  withoutCascade: boolean;
}

/**
 * In one statement, for the vehicles of an evaluation: their live subscriptions (oldest first per
 * vehicle) and each monitored vehicle's provider events recorded after its watermark and after
 * its oldest live subscription was created (at most `eventLimit`, the newest), oldest first; never
 * one taken before the vehicle's current owner got it from a previous owner (docs/ownership.md).
 */
export async function loadMonitoredSubscriptions(
  q: Queryable,
  vehicles: ReadonlyArray<{ vehicleId: string; eventsWatermark: Date | null }>,
  eventLimit: number,
): Promise<{ subscriptions: MonitoredSubscription[]; events: Map<string, NewEventSample[]> }> {
  const result = await q.query<
    MonitoredSubscription & {
      newEvents: Array<{ kind: string; recordedAt: string; g: number | null; withoutCascade: boolean }> | null;
    }
  >({
    name: 'load-monitored-subscriptions',
    text: `SELECT s.id, s.company_id AS "companyId", s.vehicle_id AS "vehicleId", s.events, s.tier, s.options,
                  s.detector_state AS "detectorState", s.created_at AS "createdAt",
                  (SELECT coalesce(string_agg(g.id::text, ',' ORDER BY g.created_at, g.id), '') FROM geofences g
                   WHERE g.company_id = s.company_id AND g.deleted_at IS NULL) AS "fenceSignature",
                  ev.events AS "newEvents"
           FROM unnest($1::uuid[], $2::timestamptz[]) AS w(vehicle_id, watermark)
           JOIN monitoring_subscriptions s ON s.vehicle_id = w.vehicle_id AND s.deleted_at IS NULL
           CROSS JOIN LATERAL (
             SELECT json_agg(json_build_object('kind', e.kind, 'recordedAt', e.recorded_at, 'g', e.g,
                                               'withoutCascade', e.without_cascade IS TRUE)
                             ORDER BY e.recorded_at, e.kind) AS events
             FROM (
               SELECT kind, recorded_at, g, without_cascade FROM vehicle_events
               WHERE vehicle_id = w.vehicle_id
                 AND recorded_at > greatest(w.watermark, (SELECT min(created_at) FROM monitoring_subscriptions m
                                                          WHERE m.vehicle_id = w.vehicle_id AND m.deleted_at IS NULL))
                 AND recorded_at >= coalesce(${ownedSinceSql('w.vehicle_id')}, '-infinity')
               ORDER BY recorded_at DESC LIMIT $3
             ) e
           ) ev
           ORDER BY s.vehicle_id, s.created_at, s.id`,
    values: [vehicles.map((v) => v.vehicleId), vehicles.map((v) => v.eventsWatermark), eventLimit],
  });
  const events = new Map<string, NewEventSample[]>();
  const subscriptions = result.rows.map(({ newEvents, ...subscription }) => {
    if (!events.has(subscription.vehicleId)) {
      events.set(
        subscription.vehicleId,
        (newEvents ?? []).map((e) => ({
          kind: e.kind as EventSample['kind'],
          recordedAt: new Date(e.recordedAt),
          g: e.g,
          withoutCascade: e.withoutCascade,
        })),
      );
    }
    return subscription;
  });
  return { subscriptions, events };
}

/** The detectors' new state of each subscription that changed. */
export async function saveDetectorStates(
  q: Queryable,
  states: ReadonlyArray<{ id: string; state: Record<string, unknown> }>,
): Promise<void> {
  if (states.length === 0) return;
  await q.query({
    name: 'save-detector-states',
    text: `UPDATE monitoring_subscriptions s SET detector_state = c.state
           FROM json_to_recordset($1::json) AS c(id uuid, state jsonb) WHERE s.id = c.id`,
    values: [JSON.stringify(states)],
  });
}

export interface NewMonitoringEvent {
  /** The event_id, already inside `body`. */
  id: string;
  subscriptionId: string;
  companyId: string;
  vehicleId: string;
  kind: MonitoringKind;
  episodeKey: string;
  severity: string;
  occurredAt: Date;
  detectedAt: Date;
  /** The exact JSON bytes (as text) signed and sent on every attempt. */
  body: string;
}

/**
 * Stores events with one pending delivery each, due at once, in one statement; answers the
 * subscriptions that now have a delivery owed (for their lanes).
 */
export async function insertMonitoringEvents(
  q: Queryable,
  events: readonly NewMonitoringEvent[],
): Promise<Array<{ subscriptionId: string; companyId: string }>> {
  if (events.length === 0) return [];
  const result = await q.query<{ subscriptionId: string; companyId: string }>({
    name: 'insert-monitoring-events',
    text: `WITH e AS (
             INSERT INTO monitoring_events (id, subscription_id, company_id, vehicle_id, kind, episode_key, severity,
                                            occurred_at, detected_at, body)
             SELECT id, subscription_id, company_id, vehicle_id, kind, episode_key, severity, occurred_at, detected_at, body
             FROM json_to_recordset($1::json) AS e(id uuid, subscription_id uuid, company_id uuid, vehicle_id uuid, kind text,
                                                  episode_key text, severity text, occurred_at timestamptz,
                                                  detected_at timestamptz, body text)
             RETURNING id, subscription_id, company_id, detected_at
           ), d AS (
             INSERT INTO monitoring_deliveries (event_id, subscription_id, company_id, next_attempt_at)
             SELECT id, subscription_id, company_id, detected_at FROM e
             RETURNING subscription_id, company_id
           )
           SELECT DISTINCT subscription_id AS "subscriptionId", company_id AS "companyId" FROM d`,
    values: [
      JSON.stringify(
        events.map((e) => ({
          id: e.id,
          subscription_id: e.subscriptionId,
          company_id: e.companyId,
          vehicle_id: e.vehicleId,
          kind: e.kind,
          episode_key: e.episodeKey,
          severity: e.severity,
          occurred_at: e.occurredAt.toISOString(),
          detected_at: e.detectedAt.toISOString(),
          body: e.body,
        })),
      ),
    ],
  });
  return result.rows;
}

/**
 * Why a delivery's next attempt is owed (`next_trigger`): the schedule, a manual retry
 * (POST /v1/deliveries/:id/retry) or a recover call.
 */
export type OwedTrigger = 'scheduled' | 'manual' | 'recover';

/** A claimed delivery: its send starts now. */
export interface ClaimedMonitoringDelivery {
  id: string;
  eventId: string;
  status: MonitoringDeliveryStatus;
  scheduledAttempts: number;
  trigger: OwedTrigger;
  body: string;
  url: string;
  secretCiphertext: Buffer;
  subscriptionDeleted: boolean;
}

/**
 * Claims up to `limit` deliveries of one subscription that are due at `now` and not being sent
 * (oldest due first), marking their sends started. SKIP LOCKED: two lanes of one subscription
 * (a retry's delayed lane and a new event's) take disjoint deliveries.
 */
export async function claimDueMonitoringDeliveries(
  q: Queryable,
  subscriptionId: string,
  now: Date,
  limit: number,
): Promise<ClaimedMonitoringDelivery[]> {
  const result = await q.query<ClaimedMonitoringDelivery>({
    name: 'claim-due-monitoring-deliveries',
    text: `WITH claimed AS (
             UPDATE monitoring_deliveries d SET sending_since = clock_timestamp()
             WHERE d.id IN (
               SELECT id FROM monitoring_deliveries
               WHERE subscription_id = $1 AND next_attempt_at <= $2 AND sending_since IS NULL
               ORDER BY next_attempt_at, created_at LIMIT $3 FOR UPDATE SKIP LOCKED
             )
             RETURNING d.id, d.event_id, d.status, d.scheduled_attempts, d.next_trigger
           )
           SELECT c.id, c.event_id AS "eventId", c.status, c.scheduled_attempts AS "scheduledAttempts",
                  c.next_trigger AS trigger, e.body, s.webhook_url AS url, s.secret_ciphertext AS "secretCiphertext",
                  s.deleted_at IS NOT NULL AS "subscriptionDeleted"
           FROM claimed c
           JOIN monitoring_events e ON e.id = c.event_id
           JOIN monitoring_subscriptions s ON s.id = $1`,
    values: [subscriptionId, now, limit],
  });
  return result.rows;
}

export interface MonitoringAttemptWrite {
  deliveryId: string;
  /** The owed trigger, or `worker_lost` for a send the due sweep settled after its worker died. */
  trigger: OwedTrigger | 'worker_lost';
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  /** The delivery after the attempt (src/monitoring/delivery-schedule.ts). */
  status: MonitoringDeliveryStatus;
  scheduledAttempts: number;
  nextAttemptAt: Date | null;
  completed: boolean;
}

/**
 * Records attempts and moves their deliveries on, in one statement; each only while its claim
 * stands (a due sweep that already settled the send as worker_lost wins). Answers the ids recorded.
 */
export async function recordMonitoringAttempts(
  q: Queryable,
  attempts: readonly MonitoringAttemptWrite[],
): Promise<string[]> {
  if (attempts.length === 0) return [];
  const result = await q.query<{ id: string }>({
    name: 'record-monitoring-attempts',
    text: `WITH a AS (
             SELECT * FROM json_to_recordset($1::json) AS a(
               delivery_id uuid, trigger text, started_at timestamptz, duration_ms integer, status_code integer, error text,
               status text, scheduled_attempts integer, next_attempt_at timestamptz, completed boolean)
           ), d AS (
             UPDATE monitoring_deliveries d SET
               status = a.status, attempts_made = d.attempts_made + 1, scheduled_attempts = a.scheduled_attempts,
               next_attempt_at = a.next_attempt_at, next_trigger = 'scheduled', sending_since = NULL,
               completed_at = CASE WHEN a.completed THEN clock_timestamp() END
             FROM a WHERE d.id = a.delivery_id AND d.sending_since IS NOT NULL
             RETURNING d.id, d.attempts_made, d.subscription_id
           )
           INSERT INTO monitoring_attempts (delivery_id, attempt_number, trigger, started_at, duration_ms, status_code, error,
                                            subscription_id)
           SELECT d.id, d.attempts_made, a.trigger, a.started_at, a.duration_ms, a.status_code, a.error, d.subscription_id
           FROM d JOIN a ON a.delivery_id = d.id
           RETURNING delivery_id AS id`,
    values: [
      JSON.stringify(
        attempts.map((a) => ({
          delivery_id: a.deliveryId,
          trigger: a.trigger,
          started_at: a.startedAt.toISOString(),
          duration_ms: Math.round(a.durationMs),
          status_code: a.statusCode,
          error: a.error,
          status: a.status,
          scheduled_attempts: a.scheduledAttempts,
          next_attempt_at: a.nextAttemptAt?.toISOString() ?? null,
          completed: a.completed,
        })),
      ),
    ],
  });
  return result.rows.map((row) => row.id);
}

/** Subscriptions with a delivery due at `now` and not being sent: the due sweep asks for their lanes. */
export async function listDueMonitoringLanes(
  q: Queryable,
  now: Date,
  limit: number,
): Promise<Array<{ subscriptionId: string; companyId: string }>> {
  const result = await q.query<{ subscriptionId: string; companyId: string }>({
    name: 'list-due-monitoring-lanes',
    text: `SELECT DISTINCT subscription_id AS "subscriptionId", company_id AS "companyId"
           FROM monitoring_deliveries WHERE next_attempt_at <= $1 AND sending_since IS NULL LIMIT $2`,
    values: [now, limit],
  });
  return result.rows;
}

/** Sends claimed before `before` and never recorded: their worker died mid-send. */
export async function listAbandonedMonitoringSends(
  q: Queryable,
  before: Date,
  limit: number,
): Promise<
  Array<{
    id: string;
    subscriptionId: string;
    status: MonitoringDeliveryStatus;
    scheduledAttempts: number;
    trigger: OwedTrigger;
    sendingSince: Date;
  }>
> {
  const result = await q.query({
    name: 'list-abandoned-monitoring-sends',
    text: `SELECT id, subscription_id AS "subscriptionId", status, scheduled_attempts AS "scheduledAttempts",
                  next_trigger AS trigger, sending_since AS "sendingSince"
           FROM monitoring_deliveries WHERE sending_since < $1 ORDER BY sending_since LIMIT $2`,
    values: [before, limit],
  });
  return result.rows;
}

/** A delivery a manual retry is asked for, locked for the rest of the transaction. */
export interface ManualRetryTarget {
  id: string;
  subscriptionId: string;
  /** An attempt of it is being sent: that attempt is the one more. */
  sending: boolean;
  /** Manual retries it has had, in all, and when the recent ones were accepted (migrations/0026). */
  manualRetries: number;
  manualRetriedAt: Date[];
}

/**
 * The company's delivery for a manual retry (POST /v1/deliveries/:id/retry), its row locked until
 * the transaction ends: concurrent retries of one delivery are decided one after the other. Null
 * for an unknown id or another company's.
 */
export async function lockDeliveryForManualRetry(
  q: Queryable,
  companyId: string,
  deliveryId: string,
): Promise<ManualRetryTarget | null> {
  const result = await q.query<ManualRetryTarget>({
    name: 'lock-delivery-for-manual-retry',
    text: `SELECT id, subscription_id AS "subscriptionId", sending_since IS NOT NULL AS sending,
                  manual_retries AS "manualRetries", manual_retried_at AS "manualRetriedAt"
           FROM monitoring_deliveries WHERE id = $1 AND company_id = $2 FOR UPDATE`,
    values: [deliveryId, companyId],
  });
  return result.rows[0] ?? null;
}

/**
 * Up to `limit` of a live subscription's deliveries that recover may resend (`failed`, created at
 * or after `since`, neither being sent nor due), oldest first, their rows locked until the
 * transaction ends: concurrent retries of the same deliveries are decided one after the other.
 * Empty for a deleted subscription.
 */
export async function lockMonitoringRecoverCandidates(
  q: Queryable,
  companyId: string,
  subscriptionId: string,
  since: Date,
  limit: number,
): Promise<ManualRetryTarget[]> {
  const result = await q.query<ManualRetryTarget>({
    name: 'lock-monitoring-recover-candidates',
    text: `SELECT d.id, d.subscription_id AS "subscriptionId", false AS sending,
                  d.manual_retries AS "manualRetries", d.manual_retried_at AS "manualRetriedAt"
           FROM monitoring_deliveries d JOIN monitoring_subscriptions s ON s.id = d.subscription_id
           WHERE d.subscription_id = $1 AND d.company_id = $2 AND s.deleted_at IS NULL
             AND d.status = 'failed' AND d.created_at >= $3 AND d.sending_since IS NULL AND d.next_attempt_at IS NULL
           ORDER BY d.created_at, d.id
           LIMIT $4
           FOR UPDATE OF d`,
    values: [subscriptionId, companyId, since, limit],
  });
  return result.rows;
}

/** A manual retry decided (src/monitoring/manual-retry-limit.ts): the window's retries to keep, this one included. */
export interface ManualRetryRecord {
  deliveryId: string;
  recentAt: readonly Date[];
}

/**
 * One more attempt now for each delivery (trigger `manual` for a retry, `recover` for recover):
 * each becomes due at `now` and its retry is counted. Answers how many were queued.
 */
export async function queueManualMonitoringRetries(
  q: Queryable,
  trigger: Exclude<OwedTrigger, 'scheduled'>,
  now: Date,
  retries: readonly ManualRetryRecord[],
): Promise<number> {
  if (retries.length === 0) return 0;
  // One row per (delivery, retry time), gathered back into each delivery's array.
  const ids = retries.flatMap((r) => r.recentAt.map(() => r.deliveryId));
  const times = retries.flatMap((r) => r.recentAt);
  const result = await q.query({
    name: 'queue-manual-monitoring-retries',
    text: `UPDATE monitoring_deliveries d SET next_attempt_at = $1, next_trigger = $2,
             manual_retries = d.manual_retries + 1, manual_retried_at = r.recent_at
           FROM (SELECT id, array_agg(at ORDER BY at) AS recent_at
                 FROM unnest($3::uuid[], $4::timestamptz[]) AS u(id, at) GROUP BY id) r
           WHERE d.id = r.id`,
    values: [now, trigger, ids, times],
  });
  return result.rowCount ?? 0;
}

/**
 * Deletes up to `limit` events (their deliveries and attempts cascade) detected longer ago than
 * their subscription's tier keeps (`retentionDays`); answers how many.
 */
export async function purgeMonitoringHistory(
  q: Queryable,
  now: Date,
  retentionDays: Readonly<Record<MonitoringTier, number>>,
  limit: number,
): Promise<number> {
  const result = await q.query<{ n: number }>({
    name: 'purge-monitoring-history',
    text: `WITH purged AS (
             DELETE FROM monitoring_events WHERE id IN (
               SELECT e.id FROM monitoring_events e JOIN monitoring_subscriptions s ON s.id = e.subscription_id
               WHERE e.detected_at < $1::timestamptz - make_interval(days => CASE s.tier
                       WHEN 'basic' THEN $2::int WHEN 'standard' THEN $3::int ELSE $4::int END)
               LIMIT $5
             ) RETURNING id
           )
           SELECT count(*)::int AS n FROM purged`,
    values: [now, retentionDays.basic, retentionDays.standard, retentionDays.premium, limit],
  });
  return result.rows[0]!.n;
}
