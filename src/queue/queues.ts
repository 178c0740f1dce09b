import { Queue, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { jobCatalog, parseJobPayload, queueNames, type JobName, type JobPayload, type QueueName } from './catalog.js';

export interface AddOptions {
  /** Idempotency: a job with this id that still exists makes the add a no-op. */
  jobId?: string;
  /** Coalescing: while a job with this deduplication id is queued or running, adds return it instead. */
  deduplicationId?: string;
  /**
   * With deduplicationId: an add while that job is running is kept (latest data wins) and runs
   * after it, so work that arrived mid-run is never lost.
   */
  keepLastIfActive?: boolean;
}

/** One BullMQ Queue per catalog queue, sharing one connection; every add is checked against the catalog. */
export class Queues {
  private readonly queues: Map<QueueName, Queue>;

  constructor(connection: Redis, readonly prefix: string) {
    this.queues = new Map(queueNames.map((name) => [name, new Queue(name, { connection, prefix })]));
  }

  queue(name: QueueName): Queue {
    return this.queues.get(name)!;
  }

  private options(name: JobName, options: AddOptions) {
    return {
      ...jobCatalog[name].options,
      ...(options.jobId ? { jobId: options.jobId } : {}),
      ...(options.deduplicationId
        ? { deduplication: { id: options.deduplicationId, ...(options.keepLastIfActive ? { keepLastIfActive: true } : {}) } }
        : {}),
    };
  }

  async add<N extends JobName>(name: N, payload: JobPayload<N>, options: AddOptions = {}): Promise<Job> {
    return this.queue(jobCatalog[name].queue).add(name, parseJobPayload(name, payload), this.options(name, options));
  }

  /** Adds many jobs of one kind in one Redis round trip. */
  async addBulk<N extends JobName>(name: N, jobs: Array<{ payload: JobPayload<N>; options?: AddOptions }>): Promise<void> {
    if (jobs.length === 0) return;
    await this.queue(jobCatalog[name].queue).addBulk(
      jobs.map((job) => ({ name, data: parseJobPayload(name, job.payload), opts: this.options(name, job.options ?? {}) })),
    );
  }

  /** Creates or updates a repeating job (BullMQ job scheduler); `schedulerId` defaults to the job name. */
  async schedule<N extends JobName>(name: N, everyMs: number, payload: JobPayload<N>, schedulerId: string = name): Promise<void> {
    const { attempts, backoff, removeOnComplete, removeOnFail } = jobCatalog[name].options;
    await this.queue(jobCatalog[name].queue).upsertJobScheduler(schedulerId, { every: everyMs }, {
      name,
      data: parseJobPayload(name, payload),
      opts: { attempts, backoff, removeOnComplete, removeOnFail },
    });
  }

  async unschedule(queue: QueueName, schedulerId: string): Promise<void> {
    await this.queue(queue).removeJobScheduler(schedulerId);
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((queue) => queue.close()));
  }
}
