/** webhooks queue: the outbox relay, core deliveries (one attempt each), and recovery. */
import type { Job } from 'bullmq';
import { withTransaction } from '../src/db/pool.js';
import { failAbandonedDeliveries, listStalePendingDeliveries, relayWebhookEvents } from '../src/db/webhooks.js';
import { parseJobPayload } from '../src/queue/catalog.js';
import { coreDeliverer, longestJobMs } from '../src/webhooks/deliver-core.js';
import { enqueueDeliveries } from '../src/webhooks/queue.js';
import type { WorkerDeps } from './worker-deps.js';

const relayBatch = 500;
const relayPasses = 3;
/** A pending delivery older than this lost its enqueue (Redis down after the relay committed). */
const pendingGraceMs = 30_000;
const backlogGraceMs = 10 * 60_000;

export function webhooksProcessor(deps: WorkerDeps) {
  const deliverCore = coreDeliverer({
    pool: deps.pool, secretsKey: deps.config.secretsKey, timeoutMs: deps.config.webhookTimeoutMs,
    allowNets: deps.config.webhookAllowNets, now: deps.now,
  });
  return async (job: Job): Promise<Record<string, unknown>> => {
    switch (job.name) {
      case 'webhooks.relay': {
        parseJobPayload('webhooks.relay', job.data);
        let relayed = 0;
        let deliveries = 0;
        // Parallel passes take disjoint events (SKIP LOCKED), so a backlog drains at the pace
        // the delivery jobs can take it rather than one transaction at a time.
        await Promise.all(Array.from({ length: relayPasses }, async () => {
          for (;;) {
            // Deliveries exist once this commits; enqueueing after is safe: recovery covers a lost enqueue.
            const batch = await withTransaction(deps.pool, (tx) => relayWebhookEvents(tx, relayBatch));
            await enqueueDeliveries(deps.queues, batch.deliveries);
            relayed += batch.relayed;
            deliveries += batch.deliveries.length;
            if (batch.relayed < relayBatch) return;
          }
        }));
        return { relayed, deliveries };
      }
      case 'webhooks.deliver': {
        const { deliveryIds } = parseJobPayload('webhooks.deliver', job.data);
        const outcomes = await deliverCore(deliveryIds);
        for (const outcome of outcomes) {
          deps.metrics.webhookDeliveries.inc({ kind: 'core', outcome: outcome.succeeded ? 'succeeded' : 'failed' });
          deps.metrics.webhookAttemptDuration.observe({ kind: 'core' }, outcome.durationMs / 1000);
        }
        return { sent: outcomes.length, succeeded: outcomes.filter((o) => o.succeeded).length };
      }
      case 'webhooks.recover': {
        parseJobPayload('webhooks.recover', job.data);
        const now = deps.now().getTime();
        // While jobs wait, a pending delivery is most likely queued behind them (a backlog), not
        // lost: only a much older one is queued again, so a backlog is not piled up every minute.
        const backlog = (await deps.queues.queue('webhooks').getWaitingCount()) > 0;
        const pending = await listStalePendingDeliveries(deps.pool, new Date(now - (backlog ? backlogGraceMs : pendingGraceMs)), 10_000);
        await enqueueDeliveries(deps.queues, pending);
        // Longer than any delivery job can take: the worker that claimed these is gone.
        const abandoned = await failAbandonedDeliveries(deps.pool, new Date(now - longestJobMs(deps.config.webhookTimeoutMs) - 60_000));
        return { requeued: pending.length, abandoned };
      }
      default:
        throw new Error(`unknown job ${job.name} on the webhooks queue`);
    }
  };
}
