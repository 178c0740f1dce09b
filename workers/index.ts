/**
 * The worker registry: which processor serves which queue, at what concurrency, and which
 * repeating jobs each queue owns. `startWorkers` runs any subset, so operators can scale each
 * queue's pool separately (`npm run worker -- maintenance`).
 */
import { Worker, type Processor } from 'bullmq';
import type { Redis } from 'ioredis';
import type { JobName, QueueName } from '../src/queue/catalog.js';
import { healthProcessor } from './health.worker.js';
import { ingestProcessor } from './ingest.worker.js';
import { maintenanceProcessor } from './maintenance.worker.js';
import { pullProcessor } from './pull.worker.js';
import { runsProcessor } from './runs.worker.js';
import { webhooksProcessor } from './webhooks.worker.js';
import type { WorkerDeps } from './worker-deps.js';

interface WorkerDefinition {
  processor: (deps: WorkerDeps) => Processor;
  concurrency: number;
  schedules: Array<{ job: JobName; everyMs: number }>;
  /**
   * How long a job's lock lives without renewal; a worker that dies leaves its job stalled until
   * then, after which another worker takes it (BullMQ default 30 s).
   */
  lockDurationMs?: number;
}

const minute = 60 * 1000;
const day = 24 * 60 * minute;

export const workerDefinitions: Record<QueueName, WorkerDefinition> = {
  maintenance: {
    processor: maintenanceProcessor,
    concurrency: 1,
    schedules: [{ job: 'maintenance.ensure-partitions', everyMs: day }],
  },
  ingest: {
    processor: ingestProcessor,
    // I/O-bound (Postgres); a few batches in flight keep both cores busy without lock contention.
    concurrency: 4,
    schedules: [{ job: 'ingest.recover', everyMs: minute }],
    // A batch takes well under a second; a dead worker's batch is retried within ~30 s.
    lockDurationMs: 15_000,
  },
  health: {
    processor: healthProcessor,
    concurrency: 4,
    // Every 15 minutes: staleness (7 days) and due dates need no finer clock.
    schedules: [{ job: 'health.sweep', everyMs: 15 * minute }],
  },
  runs: {
    processor: runsProcessor,
    concurrency: 2,
    schedules: [{ job: 'runs.from-health', everyMs: minute }, { job: 'runs.dispatch-sweep', everyMs: minute }],
  },
  webhooks: {
    processor: webhooksProcessor,
    // Deliveries wait on receivers (up to WEBHOOK_TIMEOUT_MS each): many in flight per process.
    concurrency: 64,
    schedules: [{ job: 'webhooks.relay', everyMs: 10_000 }, { job: 'webhooks.recover', everyMs: minute }],
  },
  pull: {
    processor: pullProcessor,
    concurrency: 8,
    schedules: [{ job: 'pull.sync-schedules', everyMs: 5 * minute }],
  },
};

export interface RunningWorkers {
  workers: Worker[];
  close(): Promise<void>;
}

export async function startWorkers(
  deps: WorkerDeps,
  names: readonly QueueName[],
  connection: Redis,
): Promise<RunningWorkers> {
  const workers: Worker[] = [];
  for (const name of names) {
    const definition = workerDefinitions[name];
    const worker = new Worker(name, definition.processor(deps), {
      connection,
      prefix: deps.queues.prefix,
      concurrency: definition.concurrency,
      ...(definition.lockDurationMs ? { lockDuration: definition.lockDurationMs, stalledInterval: definition.lockDurationMs } : {}),
    });
    worker.on('failed', (job, err) =>
      deps.log.warn({ queue: name, job: job?.name, jobId: job?.id, attempts: job?.attemptsMade, err: err.message }, 'job failed'),
    );
    worker.on('error', (err) => deps.log.error({ queue: name, err: err.message }, 'worker error'));
    workers.push(worker);
    for (const schedule of definition.schedules) {
      await deps.queues.schedule(schedule.job, schedule.everyMs, {});
    }
  }
  return {
    workers,
    // Waits for running jobs to finish; unfinished ones return to the queue for another worker.
    close: async () => {
      await Promise.all(workers.map((worker) => worker.close()));
    },
  };
}
