/**
 * Core (docs/api.md) deliveries, one lane turn at a time (docs/webhooks.md "Lanes, fair sharing and
 * crashes"): claim a subscription's oldest pending deliveries as their sends start, sign the
 * exact bytes that are sent with `Service-Signature: t=<unix>,v1=<hex>`, make each one's single
 * attempt through the SSRF-guarded client, and record the attempts. No retry, whatever the
 * outcome (docs/webhooks.md).
 *
 * A delivery is claimed only by a sender about to send it, so the claim is the record that its
 * send started, and a worker that dies leaves claimed exactly the sends it had started. Claims
 * are group-committed (the senders that become ready while one claim is written are served by
 * the next); records are written 100 at a time.
 */
import { performance } from 'node:perf_hooks';
import { claimLaneDeliveries, recordAttempts, type AttemptRecord, type DeliveryToSend } from '../db/webhooks.js';
import type { RunEventKind } from '../domain/run.js';
import { deliverOnce, storableText } from '../http/client.js';
import { requestLanes, type Lane } from '../queue/enqueue-webhooks.js';
import { deliveryOptions, turnSecrets, type DeliveryDeps } from '../delivery/deps.js';
import { LaneSlots } from '../delivery/lane-slots.js';
import { deferMs, laneTurnMs } from '../delivery/lane-timing.js';
import { signCoreBody } from '../delivery/sign.js';
import { webhookEnvelopeBytes } from './webhook-run.js';

export interface CoreDeliveryOutcome {
  deliveryId: string;
  succeeded: boolean;
  durationMs: number;
}

export interface LaneTurn {
  outcomes: CoreDeliveryOutcome[];
  /** The lane got no slot in this process (its company at its share): nothing was sent; it comes back later. */
  deferred: boolean;
}

/** Requests in flight to one subscription at most: what one receiver gets from one lane. */
export const laneWidth = 256;
/**
 * Requests in flight when a turn starts. Each attempt that completes lets one more start, up to
 * `laneWidth` (TCP's slow start): a lane opens as fast as its receiver answers, and a receiver
 * that never answers holds this many connections, not `laneWidth`.
 */
export const laneStartWidth = 4;
/** Attempts recorded per statement (the rest when the turn ends). */
const recordBatch = 100;
/**
 * Group commit of claims: the callers that ask while a claim is being written are served by the
 * next one, a statement for all of them; each gets its own row, or undefined when there were
 * fewer rows than callers.
 */
function groupClaims<R>(claim: (count: number) => Promise<R[]>): () => Promise<R | undefined> {
  let open: { count: number; rows: Promise<R[]> } | null = null;
  let previous: Promise<unknown> = Promise.resolve();
  return async () => {
    if (!open) {
      const batch: { count: number; rows: Promise<R[]> } = { count: 0, rows: Promise.resolve([]) };
      batch.rows = previous.then(() => {
        if (open === batch) open = null;
        return claim(batch.count);
      });
      previous = batch.rows.catch(() => undefined);
      open = batch;
    }
    const batch = open;
    const index = batch.count++;
    return (await batch.rows)[index];
  };
}

/**
 * A lane's claims, each starting where the previous one ended (claimLaneDeliveries' `from`; the
 * claims of a turn run one at a time). What a claim from the cursor does not fill is claimed from
 * the start, so a delivery that committed behind the cursor is sent in this turn too, and a
 * short answer still means the lane is empty.
 */
export function cursorClaims<R extends { createdAt: string }>(
  claim: (count: number, from: string | null) => Promise<R[]>,
): (count: number) => Promise<R[]> {
  let from: string | null = null;
  return async (count) => {
    const rows = await claim(count, from);
    if (rows.length < count && from !== null) rows.push(...(await claim(count - rows.length, null)));
    // The cursor is the newest claimed: a row from the start is older than the ones from the cursor.
    for (const row of rows) if (from === null || row.createdAt > from) from = row.createdAt;
    return rows;
  };
}

type Attempt = AttemptRecord & { succeeded: boolean };

export function coreDeliverer(deps: DeliveryDeps) {
  const options = deliveryOptions(deps);
  const slots = deps.slots ?? new LaneSlots();

  function failedBeforeSending(
    record: Pick<AttemptRecord, 'deliveryId' | 'attemptNumber' | 'trigger' | 'url' | 'startedAt'>,
    errorCode: string,
    message: string,
  ): Attempt {
    return {
      ...record,
      durationMs: 0,
      responseStatus: null,
      responseExcerpt: null,
      responseTruncated: false,
      errorCode,
      errorMessage: storableText(message.slice(0, 500)),
      resolvedIp: null,
      succeeded: false,
    };
  }

  async function attempt(delivery: DeliveryToSend, secretOf: (sealed: Buffer) => string): Promise<Attempt> {
    const record = {
      deliveryId: delivery.deliveryId,
      attemptNumber: 1,
      trigger: 'scheduled' as const,
      url: delivery.url,
      startedAt: deps.now(),
    };
    if (delivery.subscriptionDeleted) {
      return failedBeforeSending(
        record,
        'subscription_deleted',
        'the subscription was deleted before the delivery was sent',
      );
    }
    let signature: string;
    const body = webhookEnvelopeBytes(
      delivery.kind as RunEventKind,
      delivery.eventId,
      delivery.occurredAt,
      delivery.payloadJson,
    );
    try {
      signature = signCoreBody(
        secretOf(delivery.secretCiphertext),
        body,
        Math.floor(record.startedAt.getTime() / 1000),
      );
    } catch (error) {
      // A stored secret that no longer decrypts: recorded as failed like any other outcome.
      return failedBeforeSending(
        record,
        'internal_error',
        `the delivery could not be prepared: ${(error as Error).message}`,
      );
    }
    const result = await deliverOnce(
      {
        url: delivery.url,
        body,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'fleet-webhooks/1.0',
          'service-signature': signature,
        },
      },
      options,
    );
    if (result.refusedReason !== null) {
      deps.log.warn(
        { deliveryId: delivery.deliveryId, address: result.resolvedIp, reason: result.refusedReason },
        'webhook delivery refused by the SSRF guard',
      );
    }
    return {
      ...record,
      durationMs: result.durationMs,
      responseStatus: result.status,
      responseExcerpt: result.responseExcerpt,
      responseTruncated: result.responseTruncated,
      errorCode: result.errorCode,
      errorMessage: result.errorMessage,
      resolvedIp: result.resolvedIp,
      succeeded: result.ok,
    };
  }

  /** One turn: sends until the lane is empty or the turn is over; true when work may be left. */
  async function turn(subscriptionId: string, outcomes: CoreDeliveryOutcome[]): Promise<boolean> {
    const endsAt = performance.now() + laneTurnMs;
    let empty = false;
    const take = groupClaims(
      cursorClaims((count, from) => claimLaneDeliveries(deps.pool, subscriptionId, count, from)),
    );
    // Records go out 100 at a time, and the rest when the turn ends.
    const unrecorded: Attempt[] = [];
    let recording: Promise<void> = Promise.resolve();
    const errors: unknown[] = [];
    const flushRecords = () => {
      const batch = unrecorded.splice(0);
      if (batch.length === 0) return;
      recording = recording
        .then(() => recordAttempts(deps.pool, batch))
        .catch((error: unknown) => void errors.push(error));
    };
    const secretOf = turnSecrets(deps.secretsKey);
    const senders: Array<Promise<void>> = [];
    const startSender = () => senders.push(send().catch((error: unknown) => void errors.push(error)));
    const send = async (): Promise<void> => {
      while (!empty && performance.now() < endsAt) {
        const delivery = await take();
        if (!delivery) {
          empty = true;
          return;
        }
        const result = await attempt(delivery, secretOf);
        outcomes.push({ deliveryId: result.deliveryId, succeeded: result.succeeded, durationMs: result.durationMs });
        unrecorded.push(result);
        if (unrecorded.length >= recordBatch) flushRecords();
        if (senders.length < laneWidth) startSender();
      }
    };
    for (let i = 0; i < laneStartWidth; i++) startSender();
    // A sender starts others only while it runs, so when the last one listed has settled, all have.
    for (let i = 0; i < senders.length; i++) await senders[i];
    flushRecords();
    await recording;
    if (errors.length > 0) throw errors[0];
    return !empty;
  }

  /**
   * One turn of a lane. When work is left the lane asks for another turn, behind every lane
   * already waiting; a lane that gets no slot (src/delivery/lane-slots.ts) asks again later.
   */
  return async function deliverLane(lane: Lane): Promise<LaneTurn> {
    if (!slots.tryTake(lane.companyId)) {
      await requestLanes(deps.queues, [lane], deferMs);
      return { outcomes: [], deferred: true };
    }
    const outcomes: CoreDeliveryOutcome[] = [];
    try {
      if (await turn(lane.subscriptionId, outcomes)) await requestLanes(deps.queues, [lane]);
    } finally {
      slots.release(lane.companyId);
    }
    return { outcomes, deferred: false };
  };
}
