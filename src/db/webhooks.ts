/** Statements of the webhook path: outbox events, subscriptions, the relay, deliveries and attempts. */
import { cursorTimeOf } from './cursor-time.js';
import { keysetPageRows, keysetPageSql } from './keyset-page-sql.js';
import { attemptsListed } from './monitoring-deliveries.js';
import type { Queryable } from './pool.js';

/** Writes outbox events; a trigger queues each for the relay (migrations/0020). */
export async function insertWebhookEvents(
  q: Queryable,
  events: ReadonlyArray<{
    companyId: string;
    runId: string | null;
    kind: string;
    payload: unknown;
    subscriptionId: string | null;
  }>,
): Promise<Array<{ id: string; kind: string; occurredAt: Date }>> {
  const result = await q.query<{ id: string; kind: string; occurredAt: Date }>(
    `INSERT INTO webhook_events (company_id, run_id, kind, payload, subscription_id)
     SELECT company, run, kind, payload, subscription
     FROM json_to_recordset($1::json) AS e(company uuid, run uuid, kind text, payload jsonb, subscription uuid)
     RETURNING id, kind, occurred_at AS "occurredAt"`,
    [
      JSON.stringify(
        events.map((e) => ({
          company: e.companyId,
          run: e.runId,
          kind: e.kind,
          payload: e.payload,
          subscription: e.subscriptionId,
        })),
      ),
    ],
  );
  return result.rows;
}

/**
 * Creates the deliveries of up to `limit` queued events, oldest first (one per subscription that
 * wants the event's kind; webhook.test only for its subscription) and takes the events off the
 * relay queue, in one statement. SKIP LOCKED lets relays run in parallel; the unique (event,
 * subscription) key makes a repeated relay create nothing twice. Returns the new deliveries and
 * the number of events relayed.
 */
export async function relayWebhookEvents(
  q: Queryable,
  limit: number,
): Promise<{ deliveries: PendingDelivery[]; relayed: number }> {
  const result = await q.query<{ deliveries: PendingDelivery[] | null; relayed: number }>({
    name: 'relay-webhook-events',
    text: `WITH next AS (
             SELECT ctid FROM webhook_relay_queue ORDER BY occurred_at LIMIT $1 FOR UPDATE SKIP LOCKED
           ), taken AS (
             DELETE FROM webhook_relay_queue q USING next WHERE q.ctid = next.ctid RETURNING q.event_id, q.occurred_at
           ), created AS (
             INSERT INTO webhook_deliveries (event_id, subscription_id, company_id)
             SELECT e.id, s.id, e.company_id
             FROM taken t JOIN webhook_events e ON e.id = t.event_id
               JOIN webhook_subscriptions s ON s.company_id = e.company_id AND s.deleted_at IS NULL
               AND CASE WHEN e.kind = 'webhook.test' THEN s.id = e.subscription_id ELSE e.kind = ANY (s.events) END
             ORDER BY t.occurred_at
             ON CONFLICT (event_id, subscription_id) DO NOTHING
             RETURNING id, subscription_id, company_id
           )
           SELECT (SELECT json_agg(json_build_object('id', id, 'subscriptionId', subscription_id, 'companyId', company_id)) FROM created) AS deliveries,
                  (SELECT count(*) FROM taken) AS relayed`,
    values: [limit],
  });
  return { deliveries: result.rows[0]?.deliveries ?? [], relayed: result.rows[0]?.relayed ?? 0 };
}

/** A delivery owed its attempt, with the lane (subscription) that sends it. */
export interface PendingDelivery {
  id: string;
  subscriptionId: string;
  companyId: string;
}

export interface DeliveryToSend {
  deliveryId: string;
  /**
   * When the delivery was created, in UTC to the microsecond at a fixed width (so two compare in
   * time order as text): a later claim's `from`.
   */
  createdAt: string;
  eventId: string;
  kind: string;
  occurredAt: Date;
  /** The WebhookRun as stored, as JSON text. */
  payloadJson: string;
  url: string;
  secretCiphertext: Buffer;
  subscriptionDeleted: boolean;
}

/**
 * Claims up to `limit` of a subscription's oldest pending deliveries for sends that start now
 * (pending → sending), in one statement. The claim is the record that a send started: a lane
 * claims only for senders about to send. Rows claimed elsewhere are skipped, so nothing is ever
 * claimed twice.
 *
 * `from` (a previous claim's `createdAt`) starts the index scan there: the lane index keeps the
 * entries of rows claimed since the last vacuum, and skipping them one by one made each claim of
 * a long backlog slower than the last. A delivery created before `from` that committed late is
 * not seen by that claim; the caller claims from the start for what a claim from `from` did not
 * fill (src/webhooks/deliver-core.ts cursorClaims).
 */
export async function claimLaneDeliveries(
  q: Queryable,
  subscriptionId: string,
  limit: number,
  from: string | null = null,
): Promise<DeliveryToSend[]> {
  const result = await q.query<DeliveryToSend>({
    name: 'claim-lane-deliveries',
    text: `WITH next AS (
             SELECT id FROM webhook_deliveries
             WHERE subscription_id = $1 AND status = 'pending' AND created_at >= coalesce($3::timestamptz, '-infinity')
             ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED
           ), claimed AS (
             UPDATE webhook_deliveries d SET status = 'sending', claimed_at = clock_timestamp()
             FROM next WHERE d.id = next.id RETURNING d.id, d.event_id, d.subscription_id, d.created_at
           )
           SELECT c.id AS "deliveryId", ${cursorTimeOf('c.created_at')} AS "createdAt", e.id AS "eventId", e.kind, e.occurred_at AS "occurredAt", e.payload::text AS "payloadJson", s.url,
                  s.secret_ciphertext AS "secretCiphertext", s.deleted_at IS NOT NULL AS "subscriptionDeleted"
           FROM claimed c JOIN webhook_events e ON e.id = c.event_id JOIN webhook_subscriptions s ON s.id = c.subscription_id
           ORDER BY c.created_at`,
    values: [subscriptionId, limit, from],
  });
  return result.rows;
}

export interface AttemptRecord {
  deliveryId: string;
  attemptNumber: number;
  /**
   * `recovery`: written by the recover sweep (`webhooks.recover`) for a send whose worker died. A
   * stored value the API shows (docs/webhooks.md "Attempt records"), so it keeps its spelling.
   */
  trigger: 'scheduled' | 'manual' | 'recovery';
  url: string;
  startedAt: Date;
  durationMs: number;
  responseStatus: number | null;
  responseExcerpt: string | null;
  responseTruncated: boolean;
  errorCode: string | null;
  errorMessage: string | null;
  resolvedIp: string | null;
}

/**
 * Records attempts and settles their deliveries (succeeded or failed), in one statement. Text
 * fields must be storable (no NUL, well-formed UTF-16): the caller sanitises what a receiver sent.
 */
export async function recordAttempts(
  q: Queryable,
  attempts: ReadonlyArray<AttemptRecord & { succeeded: boolean }>,
): Promise<void> {
  if (attempts.length === 0) return;
  await q.query({
    name: 'record-webhook-attempts',
    text: `WITH a AS (
             SELECT * FROM json_to_recordset($1::json) AS a(
               delivery_id uuid, attempt_number integer, trigger text, url text, started_at timestamptz, duration_ms integer,
               response_status integer, response_excerpt text, response_truncated boolean, error_code text, error_message text,
               resolved_ip text, succeeded boolean)
           ), inserted AS (
             INSERT INTO webhook_attempts (delivery_id, attempt_number, trigger, url, started_at, duration_ms, response_status,
                                           response_excerpt, response_truncated, error_code, error_message, resolved_ip)
             SELECT delivery_id, attempt_number, trigger, url, started_at, duration_ms, response_status,
                    response_excerpt, response_truncated, error_code, error_message, resolved_ip FROM a
             -- A recover sweep that gave the delivery up as worker_lost was wrong: the real attempt replaces it.
             ON CONFLICT (delivery_id, attempt_number) DO UPDATE SET
               trigger = excluded.trigger, url = excluded.url, started_at = excluded.started_at, duration_ms = excluded.duration_ms,
               response_status = excluded.response_status, response_excerpt = excluded.response_excerpt,
               response_truncated = excluded.response_truncated, error_code = excluded.error_code,
               error_message = excluded.error_message, resolved_ip = excluded.resolved_ip
             WHERE webhook_attempts.trigger = 'recovery'
           )
           UPDATE webhook_deliveries d SET status = CASE WHEN a.succeeded THEN 'succeeded' ELSE 'failed' END, completed_at = clock_timestamp()
           FROM a WHERE d.id = a.delivery_id`,
    values: [
      JSON.stringify(
        attempts.map((attempt) => ({
          delivery_id: attempt.deliveryId,
          attempt_number: attempt.attemptNumber,
          trigger: attempt.trigger,
          url: attempt.url,
          started_at: attempt.startedAt.toISOString(),
          duration_ms: Math.round(attempt.durationMs),
          response_status: attempt.responseStatus,
          response_excerpt: attempt.responseExcerpt,
          response_truncated: attempt.responseTruncated,
          error_code: attempt.errorCode,
          error_message: attempt.errorMessage,
          resolved_ip: attempt.resolvedIp,
          succeeded: attempt.succeeded,
        })),
      ),
    ],
  });
}

/**
 * The lanes of pending deliveries older than `before` (their lane request was lost with Redis):
 * the recovery sweep requests those lanes again.
 */
export async function listStalePendingLanes(
  q: Queryable,
  before: Date,
  limit: number,
): Promise<Array<{ subscriptionId: string; companyId: string }>> {
  const result = await q.query<{ subscriptionId: string; companyId: string }>(
    `SELECT DISTINCT subscription_id AS "subscriptionId", company_id AS "companyId"
     FROM webhook_deliveries WHERE status = 'pending' AND created_at < $1 LIMIT $2`,
    [before, limit],
  );
  return result.rows;
}

/**
 * Deliveries claimed before `before` and never settled: their worker died after their send
 * started (a delivery is claimed only as its send starts). The request may have reached the
 * receiver and core events get one attempt, so it is not repeated; it is recorded as failed
 * (`worker_lost`). Deliveries the worker never claimed are still pending, and are sent.
 */
export async function failAbandonedDeliveries(q: Queryable, before: Date): Promise<number> {
  const result = await q.query<{ n: number }>(
    `WITH lost AS (
       UPDATE webhook_deliveries d SET status = 'failed', completed_at = clock_timestamp()
       FROM webhook_subscriptions s
       WHERE d.status = 'sending' AND d.claimed_at < $1 AND s.id = d.subscription_id
       RETURNING d.id, d.claimed_at, s.url
     ), recorded AS (
       INSERT INTO webhook_attempts (delivery_id, attempt_number, trigger, url, started_at, duration_ms, error_code, error_message)
       SELECT id, 1, 'recovery', url, claimed_at, 0, 'worker_lost',
              'the delivering worker stopped after the request was started; the receiver may have it; not retried'
       FROM lost
       ON CONFLICT (delivery_id, attempt_number) DO NOTHING
     )
     SELECT count(*)::int AS n FROM lost`,
    [before],
  );
  return result.rows[0]!.n;
}

/**
 * Deletes up to `limit` core webhook events that occurred before `before` (WEBHOOK_RETENTION_DAYS),
 * with their deliveries and attempts. An event still queued for the relay, or with a delivery
 * still pending or sending or settled since `before`, is kept: a delivery given up as worker_lost
 * may still get its real attempt record (recordAttempts), which needs the delivery. Answers how
 * many events went.
 */
export async function deleteSettledWebhookHistory(q: Queryable, before: Date, limit: number): Promise<number> {
  const result = await q.query<{ n: number }>({
    name: 'delete-settled-webhook-history',
    text: `WITH old AS (
             SELECT e.id FROM webhook_events e
             WHERE e.occurred_at < $1
               AND NOT EXISTS (SELECT FROM webhook_relay_queue q WHERE q.event_id = e.id)
               AND NOT EXISTS (SELECT FROM webhook_deliveries d WHERE d.event_id = e.id
                                 AND (d.status IN ('pending', 'sending') OR d.completed_at >= $1))
             LIMIT $2 FOR UPDATE SKIP LOCKED
           ), deliveries AS (
             SELECT d.id FROM webhook_deliveries d JOIN old ON d.event_id = old.id
           ), attempts AS (
             DELETE FROM webhook_attempts a USING deliveries d WHERE a.delivery_id = d.id
           ), deleted_deliveries AS (
             DELETE FROM webhook_deliveries d USING deliveries x WHERE d.id = x.id
           ), events AS (
             DELETE FROM webhook_events e USING old WHERE e.id = old.id RETURNING 1
           )
           SELECT count(*)::int AS n FROM events`,
    values: [before, limit],
  });
  return result.rows[0]!.n;
}

export interface SubscriptionRecord {
  id: string;
  companyId: string;
  url: string;
  events: string[];
  createdAt: Date;
  deletedAt: Date | null;
}

const subscriptionColumns = `id, company_id AS "companyId", url, events, created_at AS "createdAt", deleted_at AS "deletedAt"`;

export async function insertSubscription(
  q: Queryable,
  s: { companyId: string; url: string; events: string[]; secretCiphertext: Buffer },
): Promise<SubscriptionRecord> {
  const result = await q.query<SubscriptionRecord>(
    `INSERT INTO webhook_subscriptions (company_id, url, events, secret_ciphertext) VALUES ($1, $2, $3, $4) RETURNING ${subscriptionColumns}`,
    [s.companyId, s.url, s.events, s.secretCiphertext],
  );
  return result.rows[0]!;
}

export async function listSubscriptions(q: Queryable, companyId: string): Promise<SubscriptionRecord[]> {
  const result = await q.query<SubscriptionRecord>(
    `SELECT ${subscriptionColumns} FROM webhook_subscriptions WHERE company_id = $1 AND deleted_at IS NULL ORDER BY created_at DESC, id DESC`,
    [companyId],
  );
  return result.rows;
}

/**
 * A page of the company's live subscriptions next to the cursor row (its `created_at` to the
 * microsecond, and id), newest first: older ones for 'next', newer ones for 'previous' (the newest
 * when the cursor is null), through webhook_subscriptions_company_page.
 */
export async function listSubscriptionsPage(
  q: Queryable,
  companyId: string,
  direction: 'next' | 'previous',
  cursor: { at: string; id: string } | null,
  limit: number,
): Promise<Array<SubscriptionRecord & { cursorAt: string }>> {
  const result = await q.query<SubscriptionRecord & { cursorAt: string }>(
    keysetPageSql(
      {
        table: 'webhook_subscriptions',
        matching: 'company_id = $1 AND deleted_at IS NULL',
        time: 'created_at',
        id: 'id',
        idType: 'uuid',
        firstParam: 2,
      },
      `${subscriptionColumns}, ${cursorTimeOf('created_at')} AS "cursorAt"`,
    ),
    [companyId, direction, cursor?.at ?? null, cursor?.id ?? null, limit],
  );
  return result.rows;
}

export async function findSubscription(
  q: Queryable,
  companyId: string,
  id: string,
): Promise<SubscriptionRecord | null> {
  const result = await q.query<SubscriptionRecord>(
    `SELECT ${subscriptionColumns} FROM webhook_subscriptions WHERE id = $1 AND company_id = $2 AND deleted_at IS NULL`,
    [id, companyId],
  );
  return result.rows[0] ?? null;
}

/** Deletes softly: the subscription gets no new deliveries; its deliveries and attempts stay in the database for audit (the API answers 404 for it). */
export async function deleteSubscription(
  q: Queryable,
  companyId: string,
  id: string,
): Promise<SubscriptionRecord | null> {
  const result = await q.query<SubscriptionRecord>(
    `UPDATE webhook_subscriptions SET deleted_at = now() WHERE id = $1 AND company_id = $2 AND deleted_at IS NULL RETURNING ${subscriptionColumns}`,
    [id, companyId],
  );
  return result.rows[0] ?? null;
}

export interface DeliveryRecord {
  id: string;
  eventId: string;
  event: string;
  status: string;
  createdAt: Date;
  completedAt: Date | null;
  /** Every attempt made, those not listed included. */
  attemptCount: number;
  /** The newest `attemptsListed` attempts, oldest first. */
  attempts: Array<{
    attempt_number: number;
    trigger: string;
    started_at: string;
    duration_ms: number;
    response_status: number | null;
    response_excerpt: string | null;
    response_truncated: boolean;
    error_code: string | null;
    error_message: string | null;
  }>;
}

/**
 * The attempts of each delivery of a page `p`: the newest `$<attemptsParam>` of them, oldest first,
 * read newest first through their key, and the delivery's attempt count. Attempts are numbered
 * from 1 without gaps (a core delivery has one; the recovery record takes the same number), so the
 * newest number is the count.
 */
function attemptsOfPage(attemptsParam: number): string {
  return `CROSS JOIN LATERAL (
             SELECT coalesce(json_agg(json_build_object(
                        'attempt_number', n.attempt_number, 'trigger', n.trigger, 'started_at', n.started_at,
                        'duration_ms', n.duration_ms, 'response_status', n.response_status,
                        'response_excerpt', n.response_excerpt, 'response_truncated', n.response_truncated,
                        'error_code', n.error_code, 'error_message', n.error_message) ORDER BY n.attempt_number), '[]'::json) AS attempts,
                    coalesce(max(n.attempt_number), 0) AS count
             FROM (SELECT * FROM webhook_attempts WHERE delivery_id = p.id ORDER BY attempt_number DESC LIMIT $${attemptsParam}) n
           ) a`;
}

/**
 * A subscription's deliveries, newest first, each with its newest `attemptsListed` attempts and
 * its attempt count: the page is chosen first, then only its deliveries' attempts are read.
 */
export async function listDeliveries(
  q: Queryable,
  companyId: string,
  subscriptionId: string,
  limit: number,
  offset: number,
): Promise<DeliveryRecord[]> {
  const result = await q.query<DeliveryRecord>({
    name: 'list-webhook-deliveries',
    text: `SELECT p.*, a.attempts, a.count AS "attemptCount"
           FROM (
             SELECT d.id, d.event_id AS "eventId", e.kind AS event, d.status, d.created_at AS "createdAt",
                    d.completed_at AS "completedAt"
             FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
             WHERE d.subscription_id = $1 AND d.company_id = $2
             ORDER BY d.created_at DESC, d.id DESC LIMIT $3 OFFSET $4
           ) p
           ${attemptsOfPage(5)}
           ORDER BY p."createdAt" DESC, p.id DESC`,
    values: [subscriptionId, companyId, limit, offset, attemptsListed],
  });
  return result.rows;
}

/**
 * A page of a subscription's deliveries next to the cursor row (its `created_at` to the microsecond,
 * and id), newest first: older ones for 'next', newer ones for 'previous'
 * (the newest when the cursor is null), with their attempts as listDeliveries gives them; the page
 * is a range scan of webhook_deliveries_subscription_page.
 */
export async function listDeliveriesPage(
  q: Queryable,
  companyId: string,
  subscriptionId: string,
  direction: 'next' | 'previous',
  cursor: { at: string; id: string } | null,
  limit: number,
): Promise<Array<DeliveryRecord & { cursorAt: string }>> {
  const page = keysetPageRows({
    table: 'webhook_deliveries',
    matching: 'subscription_id = $1 AND company_id = $2',
    time: 'created_at',
    id: 'id',
    idType: 'uuid',
    firstParam: 3,
  });
  const result = await q.query<DeliveryRecord & { cursorAt: string }>({
    name: 'list-webhook-deliveries-page',
    text: `SELECT p.*, a.attempts, a.count AS "attemptCount"
           FROM (
             SELECT d.id, d.event_id AS "eventId", e.kind AS event, d.status, d.created_at AS "createdAt",
                    d.completed_at AS "completedAt", ${cursorTimeOf('d.created_at')} AS "cursorAt"
             FROM ${page} d
             JOIN webhook_events e ON e.id = d.event_id
           ) p
           ${attemptsOfPage(7)}
           ORDER BY p."createdAt" DESC, p.id DESC`,
    values: [subscriptionId, companyId, direction, cursor?.at ?? null, cursor?.id ?? null, limit, attemptsListed],
  });
  return result.rows;
}

export async function countDeliveries(q: Queryable, companyId: string, subscriptionId: string): Promise<number> {
  const result = await q.query<{ n: number }>(
    `SELECT count(*) AS n FROM webhook_deliveries WHERE subscription_id = $1 AND company_id = $2`,
    [subscriptionId, companyId],
  );
  return result.rows[0]!.n;
}

/** Live (not deleted) subscriptions of a company, for its cap. */
export async function countSubscriptions(q: Queryable, companyId: string): Promise<number> {
  const result = await q.query<{ n: number }>(
    `SELECT count(*) AS n FROM webhook_subscriptions WHERE company_id = $1 AND deleted_at IS NULL`,
    [companyId],
  );
  return result.rows[0]!.n;
}
