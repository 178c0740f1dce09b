/**
 * The job catalog: every job name, the queue it runs on, its payload schema and its retry and
 * retention options. Producers and workers both read their contract from here. Payloads carry
 * ids and keys only, never secrets or raw provider payloads (those stay in Postgres).
 */
import Type, { type Static, type TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { UnrecoverableError, type JobsOptions } from 'bullmq';

export const queueNames = ['maintenance'] as const;
export type QueueName = (typeof queueNames)[number];

interface JobDefinition<S extends TSchema> {
  queue: QueueName;
  schema: S;
  options: JobsOptions;
}

function job<S extends TSchema>(definition: JobDefinition<S>): JobDefinition<S> {
  return definition;
}

// Finished jobs are trimmed so Redis memory stays bounded (research/pipeline-perf.md §2).
const retention = { removeOnComplete: { count: 1000 }, removeOnFail: { count: 10_000 } };

export const jobCatalog = {
  /** Creates the monthly `readings` partitions ahead of time; scheduled daily. */
  'maintenance.ensure-partitions': job({
    queue: 'maintenance',
    schema: Type.Object({}, { additionalProperties: false }),
    options: { attempts: 3, backoff: { type: 'exponential', delay: 10_000 }, ...retention },
  }),
};

export type JobName = keyof typeof jobCatalog;
export type JobPayload<N extends JobName> = Static<(typeof jobCatalog)[N]['schema']>;

const validators = new Map(Object.entries(jobCatalog).map(([name, def]) => [name, Compile(def.schema)]));

/** The payload, checked against the catalog. A malformed payload can never succeed, so it is not retried. */
export function parseJobPayload<N extends JobName>(name: N, data: unknown): JobPayload<N> {
  const validator = validators.get(name);
  if (!validator) throw new UnrecoverableError(`unknown job ${name}`);
  if (!validator.Check(data)) {
    const first = [...validator.Errors(data)][0];
    throw new UnrecoverableError(`invalid payload for ${name}: ${first?.instancePath || '/'} ${first?.message ?? ''}`.trim());
  }
  return data as JobPayload<N>;
}
