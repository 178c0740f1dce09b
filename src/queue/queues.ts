import { Queue, type Job } from 'bullmq';
import type { RedisConnection } from './connection.js';
import { jobCatalog, parseJobPayload, queueNames, type JobName, type JobPayload, type QueueName } from './catalog.js';

export interface AddOptions {
  /** Coalescing: while a job with this deduplication id is queued or running, adds return it instead. */
  deduplicationId?: string;
  /**
   * With deduplicationId: an add while that job is running is kept (latest data wins) and runs
   * after it, so work that arrived mid-run is never lost.
   */
  keepLastIfActive?: boolean;
  /** Waits this long before the job may run; 0 or absent runs it as soon as a worker is free. */
  delayMs?: number;
}

/** One BullMQ Queue per catalog queue, sharing one connection; every add is checked against the catalog. */
export class Queues {
  private readonly queues: Map<QueueName, Queue>;

  constructor(
    connection: RedisConnection,
    readonly prefix: string,
  ) {
    this.queues = new Map(
      queueNames.map((name) => {
        const queue = new Queue(name, { connection, prefix });
        // Without a listener BullMQ prints every error of the shared connection to stderr, once per
        // queue; the connection logs it once already (connection.ts).
        queue.on('error', () => {});
        return [name, queue];
      }),
    );
  }

  queue(name: QueueName): Queue {
    return this.queues.get(name)!;
  }

  /** The queue a job runs on. */
  queueOf(name: JobName): Queue {
    return this.queue(jobCatalog[name].queue);
  }

  private options(name: JobName, options: AddOptions) {
    return {
      ...jobCatalog[name].options,
      ...(options.deduplicationId
        ? {
            deduplication: {
              id: options.deduplicationId,
              ...(options.keepLastIfActive ? { keepLastIfActive: true } : {}),
            },
          }
        : {}),
      ...(options.delayMs ? { delay: options.delayMs } : {}),
    };
  }

  async add<N extends JobName>(name: N, payload: JobPayload<N>, options: AddOptions = {}): Promise<Job> {
    return this.queueOf(name).add(name, parseJobPayload(name, payload), this.options(name, options));
  }

  /** Adds many jobs of one kind in one Redis round trip. */
  async addBulk<N extends JobName>(
    name: N,
    jobs: Array<{ payload: JobPayload<N>; options?: AddOptions }>,
  ): Promise<void> {
    if (jobs.length === 0) return;
    await this.queueOf(name).addBulk(
      jobs.map((job) => ({
        name,
        data: parseJobPayload(name, job.payload),
        opts: this.options(name, job.options ?? {}),
      })),
    );
  }

  /** Creates or updates a repeating job (BullMQ job scheduler); `schedulerId` defaults to the job name. */
  async schedule<N extends JobName>(
    name: N,
    everyMs: number,
    payload: JobPayload<N>,
    schedulerId: string = name,
  ): Promise<void> {
    const { attempts, backoff, removeOnComplete, removeOnFail } = jobCatalog[name].options;
    await this.queueOf(name).upsertJobScheduler(
      schedulerId,
      { every: everyMs },
      {
        name,
        data: parseJobPayload(name, payload),
        opts: { attempts, backoff, removeOnComplete, removeOnFail },
      },
    );
  }

  async unschedule(queue: QueueName, schedulerId: string): Promise<void> {
    await this.queue(queue).removeJobScheduler(schedulerId);
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((queue) => queue.close()));
  }
}
