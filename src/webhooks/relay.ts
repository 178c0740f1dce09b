/**
 * The outbox relay (`webhooks.relay`, asked for after every run change and on a schedule): turns
 * outbox events into one delivery per subscription that wants them, and asks for those lanes.
 */
import { withTransaction, type Pool } from '../db/pool.js';
import { relayWebhookEvents } from '../db/webhooks.js';
import type { Queues } from '../queue/queues.js';
import { requestLanes } from '../queue/enqueue-webhooks.js';

/** Events per relay transaction. */
const relayBatch = 500;
/** Relay transactions running at once. */
const relayPasses = 3;

export async function relayWebhookOutbox(deps: {
  pool: Pool;
  queues: Queues;
}): Promise<{ relayed: number; deliveries: number }> {
  let relayed = 0;
  let deliveries = 0;
  // Parallel passes take disjoint events (SKIP LOCKED), so a backlog drains at the pace
  // the delivery jobs can take it rather than one transaction at a time.
  await Promise.all(
    Array.from({ length: relayPasses }, async () => {
      for (;;) {
        // Deliveries exist once this commits; enqueueing after is safe: recovery covers a lost enqueue.
        const batch = await withTransaction(deps.pool, (tx) => relayWebhookEvents(tx, relayBatch));
        await requestLanes(deps.queues, batch.deliveries);
        relayed += batch.relayed;
        deliveries += batch.deliveries.length;
        if (batch.relayed < relayBatch) return;
      }
    }),
  );
  return { relayed, deliveries };
}
