import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { jobCatalog, parseJobPayload, queueNames, type JobName, type JobPayload, type QueueName } from './catalog.js';

/** One BullMQ Queue per catalog queue, sharing one connection; `add` validates against the catalog. */
export class Queues {
  private readonly queues: Map<QueueName, Queue>;

  constructor(connection: Redis, readonly prefix: string) {
    this.queues = new Map(queueNames.map((name) => [name, new Queue(name, { connection, prefix })]));
  }

  queue(name: QueueName): Queue {
    return this.queues.get(name)!;
  }

  async add<N extends JobName>(name: N, payload: JobPayload<N>, options: { jobId?: string } = {}): Promise<void> {
    const definition = jobCatalog[name];
    await this.queue(definition.queue).add(name, parseJobPayload(name, payload), { ...definition.options, ...options });
  }

  /** Creates or updates a repeating job (BullMQ job scheduler); the id is the job name. */
  async schedule<N extends JobName>(name: N, everyMs: number, payload: JobPayload<N>): Promise<void> {
    const definition = jobCatalog[name];
    await this.queue(definition.queue).upsertJobScheduler(name, { every: everyMs }, {
      name,
      data: parseJobPayload(name, payload),
      opts: { attempts: definition.options.attempts, backoff: definition.options.backoff, removeOnComplete: definition.options.removeOnComplete, removeOnFail: definition.options.removeOnFail },
    });
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((queue) => queue.close()));
  }
}
