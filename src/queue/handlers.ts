/**
 * Worker dispatch driven by the job catalog: a queue's shell is one map from each of its job
 * names to a handler, typed from the catalog, so a handler receives its payload already parsed
 * and a job added to the catalog without a handler fails to compile.
 */
import { DelayedError, UnrecoverableError, type Job, type Processor } from 'bullmq';
import type { Metrics } from '../metrics.js';
import { parseJobPayload, type JobName, type JobNameOf, type JobPayload, type QueueName } from './catalog.js';

/** `token` is the job's lock token, which `job.moveToDelayed` needs. */
export type JobHandler<N extends JobName> = (payload: JobPayload<N>, job: Job, token?: string) => Promise<object>;

export type JobHandlers<Q extends QueueName> = { [N in JobNameOf<Q>]: JobHandler<N> };

/**
 * The BullMQ processor of one queue: looks the handler up by job name, parses the payload once
 * against the catalog and records the job's duration. A name the queue has no handler for (a
 * job from a newer or older release, or a typo) can never succeed: unrecoverable, not retried.
 */
export function processorFor<Q extends QueueName>(queue: Q, handlers: JobHandlers<Q>, metrics: Metrics): Processor {
  const byName = new Map<string, JobHandler<JobName>>(Object.entries(handlers));
  return async (job: Job, token?: string) => {
    const handler = byName.get(job.name);
    if (!handler) throw new UnrecoverableError(`unknown job ${job.name} on the ${queue} queue`);
    const stop = metrics.jobDuration.startTimer({ queue, job: job.name });
    try {
      const result = await handler(parseJobPayload(job.name as JobName, job.data), job, token);
      stop({ outcome: 'completed' });
      return result;
    } catch (error) {
      stop({ outcome: error instanceof DelayedError ? 'delayed' : 'failed' });
      throw error;
    }
  };
}
