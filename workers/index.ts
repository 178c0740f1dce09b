/**
 * The worker registry: which handlers serve which queue and at what concurrency. `startWorkers`
 * runs any subset, so operators can scale each queue's pool separately (`npm run worker --
 * maintenance`), and keeps the repeating jobs of the queues it runs in Redis.
 */
import { Worker } from 'bullmq';
import type { RedisConnection } from '../src/queue/connection.js';
import type { QueueName } from '../src/queue/catalog.js';
import { processorFor, type JobHandlers } from '../src/queue/handlers.js';
import { keepSchedules, type ExtraSchedules, type ScheduleKeeper } from '../src/queue/schedules.js';
import { healthHandlers } from './health.worker.js';
import { ingestHandlers } from './ingest.worker.js';
import { maintenanceHandlers } from './maintenance.worker.js';
import { pullHandlers, pullSchedules } from './pull.worker.js';
import { runsHandlers } from './runs.worker.js';
import { webhooksHandlers } from './webhooks.worker.js';
import { deliverySlotsPerProcess } from '../src/delivery/lane-slots.js';
import type { WorkerDeps } from './worker-deps.js';

interface WorkerDefinition<Q extends QueueName> {
  handlers: (deps: WorkerDeps) => JobHandlers<Q>;
  concurrency: number;
  /**
   * How long a job's lock lives without renewal; a worker that dies leaves its job stalled until
   * then, after which another worker takes it (BullMQ default 30 s).
   */
  lockDurationMs?: number;
  /**
   * How often the queue's workers look for jobs whose lock expired (BullMQ `stalledInterval`; one
   * look per interval across all processes): a dead worker's job runs again within the lock
   * duration plus this. Defaults to the lock duration.
   */
  stalledCheckMs?: number;
  /** The schedulers this queue keeps beyond the catalog's, checked and restored with them (src/queue/schedules.ts). */
  extraSchedules?: (deps: WorkerDeps) => ExtraSchedules;
}

export const workerDefinitions: { [Q in QueueName]: WorkerDefinition<Q> } = {
  maintenance: { handlers: maintenanceHandlers, concurrency: 1 },
  ingest: {
    handlers: ingestHandlers,
    // I/O-bound (Postgres); a few batches in flight keep both cores busy without lock contention.
    concurrency: 4,
    // A batch takes well under a second; a dead worker's batch is retried within ~20 s.
    lockDurationMs: 15_000,
    stalledCheckMs: 5000,
  },
  health: {
    handlers: healthHandlers,
    concurrency: 4,
    // An evaluation takes well under a second; a dead worker's evaluation (and the one deduplicated
    // behind it) runs again within ~15 s, so a crash delays derived state by less than 30 s (docs/ingestion.md).
    // The sweep runs minutes under the same lock; one taken back while it still runs does nothing (sweepHealth).
    lockDurationMs: 10_000,
    stalledCheckMs: 5000,
  },
  runs: { handlers: runsHandlers, concurrency: 2 },
  webhooks: {
    handlers: webhooksHandlers,
    // Deliveries wait on receivers (up to WEBHOOK_TIMEOUT_MS each): many in flight per process.
    concurrency: deliverySlotsPerProcess,
    // A dead worker's lane (its running turn) is given up within ~30 s, so its subscription's next turn is not held back longer.
    lockDurationMs: 15_000,
  },
  // The per-connection feed schedulers go with a Redis loss: resynced at once, not at the next pull.sync-schedules.
  pull: { handlers: pullHandlers, concurrency: 8, extraSchedules: pullSchedules },
};

export interface RunningWorkers {
  workers: Worker[];
  /** The repeating jobs of these queues; readiness asks it whether they are all in Redis. */
  schedules: ScheduleKeeper;
  close(): Promise<void>;
}

function startWorker<Q extends QueueName>(name: Q, deps: WorkerDeps, connection: RedisConnection): Worker {
  const definition = workerDefinitions[name] as WorkerDefinition<Q>;
  const worker = new Worker(name, processorFor(name, definition.handlers(deps), deps.metrics), {
    connection,
    prefix: deps.queues.prefix,
    concurrency: definition.concurrency,
    ...(definition.lockDurationMs
      ? {
          lockDuration: definition.lockDurationMs,
          stalledInterval: definition.stalledCheckMs ?? definition.lockDurationMs,
        }
      : {}),
  });
  worker.on('failed', (job, err) =>
    deps.log.warn(
      { queue: name, job: job?.name, jobId: job?.id, attempts: job?.attemptsMade, err: err.message },
      'job failed',
    ),
  );
  worker.on('error', (err) => deps.log.error({ queue: name, err: err.message }, 'worker error'));
  return worker;
}

export async function startWorkers(
  deps: WorkerDeps,
  names: readonly QueueName[],
  connection: RedisConnection,
): Promise<RunningWorkers> {
  const workers = names.map((name) => startWorker(name, deps, connection));
  const extras = names.flatMap((name) => workerDefinitions[name].extraSchedules?.(deps) ?? []);
  const schedules = keepSchedules(
    deps.queues,
    names,
    deps,
    extras.length === 0
      ? undefined
      : {
          allLive: async () => (await Promise.all(extras.map((e) => e.allLive()))).every(Boolean),
          restore: async () => {
            for (const extra of extras) await extra.restore();
          },
        },
  );
  // At start every scheduler is upserted, the extra ones too (a loss while no process of the queue
  // ran is repaired at once), which also applies a changed interval; from then on only missing
  // ones are recreated, so processes of two releases do not keep resetting them.
  await schedules.upsertAll();
  schedules.start(deps.config.scheduleCheckIntervalMs);
  return {
    workers,
    schedules,
    // Waits for running jobs to finish; unfinished ones return to the queue for another worker.
    close: async () => {
      schedules.stop();
      await Promise.all(workers.map((worker) => worker.close()));
    },
  };
}
