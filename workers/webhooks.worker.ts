/** webhooks queue: the outbox relay, core delivery lanes (one attempt each), recovery, and the monitoring lanes and due sweep. */
import { LaneSlots } from '../src/delivery/lane-slots.js';
import { monitoringDeliverer } from '../src/monitoring/deliver.js';
import { sweepMonitoringDeliveries } from '../src/monitoring/due-sweep.js';
import type { JobHandlers } from '../src/queue/handlers.js';
import { coreDeliverer } from '../src/webhooks/deliver-core.js';
import { recoverDeliveries } from '../src/webhooks/recover.js';
import { relayWebhookOutbox } from '../src/webhooks/relay.js';
import type { WorkerDeps } from './worker-deps.js';

export function webhooksHandlers(deps: WorkerDeps): JobHandlers<'webhooks'> {
  // One count of running lanes for core and monitoring: they share the worker's concurrency.
  const slots = new LaneSlots();
  const deliverLane = coreDeliverer({
    slots,
    pool: deps.pool,
    queues: deps.queues,
    log: deps.log,
    secretsKey: deps.config.secretsKey,
    timeoutMs: deps.config.webhookTimeoutMs,
    allowNets: deps.config.webhookAllowNets,
    now: deps.now,
  });
  const deliverMonitoringLane = monitoringDeliverer({
    slots,
    pool: deps.pool,
    queues: deps.queues,
    log: deps.log,
    secretsKey: deps.config.secretsKey,
    timeoutMs: deps.config.webhookTimeoutMs,
    allowNets: deps.config.webhookAllowNets,
    retryDelaysMs: deps.config.monitoringRetryDelaysMs,
    now: deps.now,
  });
  const outcomeOf = (attempt: { succeeded: boolean }) => (attempt.succeeded ? 'succeeded' : 'failed');
  /** A lane turn's attempts into the delivery metrics; the job's result counts them. */
  const countAttempts = (
    kind: 'core' | 'monitoring',
    attempts: ReadonlyArray<{ succeeded: boolean; durationMs: number }>,
  ) => {
    for (const attempt of attempts) {
      deps.metrics.webhookDeliveries.inc({ kind, outcome: outcomeOf(attempt) });
      deps.metrics.webhookAttemptDuration.observe({ kind }, attempt.durationMs / 1000);
    }
    return { sent: attempts.length, succeeded: attempts.filter((a) => a.succeeded).length };
  };
  return {
    'webhooks.relay': () => relayWebhookOutbox(deps),
    'webhooks.deliver': async (lane) => {
      const { outcomes, deferred } = await deliverLane(lane);
      return { ...countAttempts('core', outcomes), deferred };
    },
    'webhooks.recover': async () => {
      const recovered = await recoverDeliveries({
        pool: deps.pool,
        queues: deps.queues,
        timeoutMs: deps.config.webhookTimeoutMs,
        now: deps.now,
        log: deps.log,
      });
      deps.metrics.webhookDeliveries.inc({ kind: 'core', outcome: 'worker_lost' }, recovered.workerLost);
      return recovered;
    },
    'webhooks.monitoring-lane': async (lane) => {
      const { outcomes, deferred } = await deliverMonitoringLane(lane);
      for (const outcome of outcomes)
        deps.metrics.monitoringAttempts.inc({ trigger: outcome.trigger, outcome: outcomeOf(outcome) });
      return { ...countAttempts('monitoring', outcomes), deferred };
    },
    'webhooks.monitoring-recover': async () => {
      const swept = await sweepMonitoringDeliveries({
        pool: deps.pool,
        queues: deps.queues,
        timeoutMs: deps.config.webhookTimeoutMs,
        retryDelaysMs: deps.config.monitoringRetryDelaysMs,
        now: deps.now,
        log: deps.log,
      });
      deps.metrics.webhookDeliveries.inc({ kind: 'monitoring', outcome: 'worker_lost' }, swept.workerLost);
      deps.metrics.monitoringAttempts.inc({ trigger: 'worker_lost', outcome: 'failed' }, swept.workerLost);
      return swept;
    },
  };
}
