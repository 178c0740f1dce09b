/**
 * The job catalog: every job name, the queue it runs on, its payload schema and its retry and
 * retention options. Producers and workers both read their contract from here. Payloads carry
 * ids and keys only, never secrets or raw provider payloads (those stay in Postgres).
 */
import Type, { type Static, type TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { UnrecoverableError, type JobsOptions } from 'bullmq';

export const queueNames = ['maintenance', 'ingest', 'pull', 'health', 'runs', 'webhooks'] as const;
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

const empty = Type.Object({}, { additionalProperties: false });
const uuid = Type.String({ format: 'uuid' });

export const jobCatalog = {
  /** Creates the monthly `readings` partitions ahead of time; scheduled daily. */
  'maintenance.ensure-partitions': job({
    queue: 'maintenance',
    schema: empty,
    options: { attempts: 3, backoff: { type: 'exponential', delay: 10_000 }, ...retention },
  }),
  /**
   * Normalizes one inbox row (a push or a pulled page) into readings and latest state. The job id
   * is `inbox-<id>`, so re-enqueueing a row that is already queued adds nothing; a retry after a
   * crash is harmless because processing is idempotent.
   */
  'ingest.process': job({
    queue: 'ingest',
    schema: Type.Object({ inboxId: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }),
    options: { attempts: 8, backoff: { type: 'exponential', delay: 1000 }, ...retention },
  }),
  /** Re-enqueues inbox rows left unprocessed (Redis lost, worker killed); every minute and at start. */
  'ingest.recover': job({
    queue: 'ingest',
    schema: empty,
    options: { attempts: 1, ...retention },
  }),
  /** Pulls the next pages of one connection's provider feed; one job scheduler per connection. */
  'pull.feed': job({
    queue: 'pull',
    schema: Type.Object({ connectionId: uuid }, { additionalProperties: false }),
    options: { attempts: 1, ...retention },
  }),
  /** Pulls one vehicle now (POST /vehicles/{id}/refresh); deduplicated per vehicle while queued. */
  'pull.refresh': job({
    queue: 'pull',
    schema: Type.Object(
      { vehicleId: uuid, refreshId: uuid, cascade: Type.Boolean() },
      { additionalProperties: false },
    ),
    options: { attempts: 4, backoff: { type: 'exponential', delay: 2000 }, ...retention },
  }),
  /**
   * Evaluates one vehicle's health over its new samples. Deduplicated per vehicle and cascade flag,
   * keeping one more run queued when samples arrive during a run.
   */
  'health.evaluate': job({
    queue: 'health',
    schema: Type.Object({ vehicleId: uuid, cascade: Type.Boolean() }, { additionalProperties: false }),
    options: { attempts: 5, backoff: { type: 'exponential', delay: 500 }, ...retention },
  }),
  /** Re-evaluates every active vehicle in pages: staleness and due dates appear without new data. */
  'health.sweep': job({
    queue: 'health',
    schema: empty,
    options: { attempts: 1, ...retention },
  }),
  /**
   * Opens service requests from health events (critical status, overdue maintenance), per company
   * setting; deduplicated so a burst of evaluations collapses into one run.
   */
  'runs.from-health': job({
    queue: 'runs',
    schema: empty,
    options: { attempts: 5, backoff: { type: 'exponential', delay: 1000 }, ...retention },
  }),
  /** Asks the dispatch assistant for a proposal for a new run, once per run (`dispatch_checked_at`). */
  'runs.dispatch': job({
    queue: 'runs',
    schema: Type.Object({ companyId: uuid, runId: uuid }, { additionalProperties: false }),
    options: { attempts: 3, backoff: { type: 'exponential', delay: 1000 }, ...retention },
  }),
  /** Re-requests dispatch for new runs the assistant never looked at (request lost); every minute. */
  'runs.dispatch-sweep': job({
    queue: 'runs',
    schema: empty,
    options: { attempts: 1, ...retention },
  }),
  /** Turns outbox events into one delivery per subscription; after every run change and every 10 s. */
  'webhooks.relay': job({
    queue: 'webhooks',
    schema: empty,
    options: { attempts: 5, backoff: { type: 'exponential', delay: 500 }, ...retention },
  }),
  /**
   * The one attempt of each of a few core deliveries to one subscription. Never retried (spec/000:
   * deliveries are not retried): the rows are claimed before sending, so a job that runs twice
   * sends once.
   */
  'webhooks.deliver': job({
    queue: 'webhooks',
    schema: Type.Object({ deliveryIds: Type.Array(uuid, { minItems: 1, maxItems: 100 }) }, { additionalProperties: false }),
    options: { attempts: 1, ...retention },
  }),
  /** Re-enqueues deliveries whose enqueue was lost and settles ones whose worker died; every minute. */
  'webhooks.recover': job({
    queue: 'webhooks',
    schema: empty,
    options: { attempts: 1, ...retention },
  }),
  /** Makes the per-connection pull schedulers match the active connections; every 5 minutes and at start. */
  'pull.sync-schedules': job({
    queue: 'pull',
    schema: empty,
    options: { attempts: 1, ...retention },
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
