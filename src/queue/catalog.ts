/**
 * The job catalog: every job name, the queue it runs on, its payload schema and its retry and
 * retention options. Producers and workers both read their contract from here. Payloads carry
 * ids and keys only, never secrets or raw provider payloads (those stay in Postgres).
 */
import Type, { type Static, type TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { UnrecoverableError, type JobsOptions } from 'bullmq';
import type { Config } from '../config.js';
import { healthSweepIntervalMs } from '../domain/health-sweep.js';

export const queueNames = ['maintenance', 'ingest', 'pull', 'health', 'runs', 'webhooks'] as const;
export type QueueName = (typeof queueNames)[number];

/** The settings a repeating job's interval may come from. */
export type ScheduleSettings = Pick<Config, 'healthRelayIntervalMs'>;

interface JobDefinition<Q extends QueueName, S extends TSchema> {
  queue: Q;
  schema: S;
  options: JobsOptions;
  /**
   * A repeating job: its job scheduler (id = the job name) creates one every `everyMs` (fixed, or
   * read from a setting). Every worker process of the queue keeps the scheduler in Redis
   * (src/queue/schedules.ts).
   */
  everyMs?: number | ((settings: ScheduleSettings) => number);
}

function job<Q extends QueueName, S extends TSchema>(definition: JobDefinition<Q, S>): JobDefinition<Q, S> {
  return definition;
}

const minute = 60_000;

// Finished jobs are trimmed so Redis memory stays bounded (docs/performance.md).
const retention = { removeOnComplete: { count: 1000 }, removeOnFail: { count: 10_000 } };

const empty = Type.Object({}, { additionalProperties: false });
const uuid = Type.String({ format: 'uuid' });

export const jobCatalog = {
  /**
   * Creates the monthly `readings` partitions ahead of time and drops those past
   * READINGS_RETENTION_MONTHS; daily.
   */
  'maintenance.ensure-partitions': job({
    queue: 'maintenance',
    schema: empty,
    options: { attempts: 3, backoff: { type: 'exponential', delay: 10_000 }, ...retention },
    everyMs: 24 * 60 * minute,
  }),
  /** Deletes Idempotency-Key answers past their 24 hours (docs/api.md); hourly. */
  'maintenance.purge-idempotency-keys': job({
    queue: 'maintenance',
    schema: empty,
    options: { attempts: 3, backoff: { type: 'exponential', delay: 10_000 }, ...retention },
    everyMs: 60 * minute,
  }),
  /**
   * Processes pending inbox rows (pushes and pulled pages) into readings and latest state, a batch
   * at a time until none is left (src/ingest/ingest-job.ts). One per shard, deduplicated while
   * queued and kept once more while running (src/queue/enqueue-ingest.ts); a retry after a crash is
   * harmless because processing is idempotent and rows are claimed with SKIP LOCKED.
   */
  'ingest.drain': job({
    queue: 'ingest',
    schema: Type.Object({ shard: Type.Integer({ minimum: 0 }) }, { additionalProperties: false }),
    options: { attempts: 8, backoff: { type: 'exponential', delay: 1000 }, ...retention },
  }),
  /** Wakes the drains of inbox rows left unprocessed (Redis lost, worker killed); every minute. */
  'ingest.recover': job({
    queue: 'ingest',
    schema: empty,
    options: { attempts: 1, ...retention },
    everyMs: minute,
  }),
  /** Pulls the next pages of one connection's provider feed; one job scheduler per connection. */
  'pull.feed': job({
    queue: 'pull',
    schema: Type.Object({ connectionId: uuid }, { additionalProperties: false }),
    options: { attempts: 1, ...retention },
  }),
  /**
   * Pulls one vehicle now (POST /vehicles/{id}/refresh). Deduplicated per vehicle and cascade flag
   * while queued (src/queue/enqueue-ingest.ts), so a request with cascade never joins one without.
   */
  'pull.refresh': job({
    queue: 'pull',
    schema: Type.Object({ vehicleId: uuid, refreshId: uuid, cascade: Type.Boolean() }, { additionalProperties: false }),
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
  /**
   * Re-evaluates, in pages, the active vehicles whose health can have changed by time (a recheck
   * time reached, their turn of the hourly full evaluation): staleness and due dates appear
   * without new data. Every 15 minutes: staleness (7 days) and due dates need no finer clock.
   */
  'health.sweep': job({
    queue: 'health',
    schema: empty,
    options: { attempts: 1, ...retention },
    everyMs: healthSweepIntervalMs,
  }),
  /**
   * Enqueues the health evaluations that committed ingest batches recorded as owed but never
   * enqueued (the process died between commit and enqueue, or Redis was away), and deletes them
   * (src/ingest/owed-evaluations.ts); every HEALTH_RELAY_INTERVAL_MS, so a crash delays derived
   * state by seconds rather than until the sweep.
   */
  'health.relay': job({
    queue: 'health',
    schema: empty,
    options: { attempts: 1, ...retention },
    everyMs: (settings) => settings.healthRelayIntervalMs,
  }),
  /**
   * Opens service requests from health events (critical status, overdue maintenance), per company
   * setting; deduplicated so a burst of evaluations collapses into one run.
   */
  'runs.from-health': job({
    queue: 'runs',
    schema: empty,
    options: { attempts: 5, backoff: { type: 'exponential', delay: 1000 }, ...retention },
    everyMs: minute,
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
    everyMs: minute,
  }),
  /** Turns outbox events into one delivery per subscription; after every run change and every 10 s. */
  'webhooks.relay': job({
    queue: 'webhooks',
    schema: empty,
    options: { attempts: 5, backoff: { type: 'exponential', delay: 500 }, ...retention },
    everyMs: 10_000,
  }),
  /**
   * One turn of a subscription's delivery lane: claims its oldest pending core deliveries and
   * makes their one attempt each (core deliveries are not retried: docs/webhooks.md). Deduplicated per
   * subscription (one running, one waiting); a turn that runs twice sends nothing twice, because
   * deliveries are claimed and their sends marked started before they go out.
   */
  'webhooks.deliver': job({
    queue: 'webhooks',
    schema: Type.Object({ subscriptionId: uuid, companyId: uuid }, { additionalProperties: false }),
    options: { attempts: 1, ...retention },
  }),
  /** Requests lanes whose request was lost and settles deliveries whose worker died; every minute. */
  'webhooks.recover': job({
    queue: 'webhooks',
    schema: empty,
    options: { attempts: 1, ...retention },
    everyMs: minute,
  }),
  /**
   * One turn of a monitoring subscription's delivery lane: claims its due deliveries and makes one
   * attempt each (signed, retried on the schedule kept in Postgres). On the webhooks queue: the
   * same kind of work as core lanes (waiting on receivers), scaled with the same worker processes.
   * Deduplicated per subscription for new events; each retry asks with its own delayed job.
   */
  'webhooks.monitoring-lane': job({
    queue: 'webhooks',
    schema: Type.Object({ subscriptionId: uuid, companyId: uuid }, { additionalProperties: false }),
    options: { attempts: 1, ...retention },
  }),
  /**
   * The monitoring due sweep: records sends of dead workers as worker_lost and asks for the lanes
   * of every due delivery (a retry whose job was lost with Redis); every 10 s, so such a retry is
   * late by seconds against waits of minutes.
   */
  'webhooks.monitoring-recover': job({
    queue: 'webhooks',
    schema: empty,
    options: { attempts: 1, ...retention },
    everyMs: 10_000,
  }),
  /** Deletes monitoring events and deliveries past their tier's retention (30/90/365 days); hourly. */
  'maintenance.purge-monitoring': job({
    queue: 'maintenance',
    schema: empty,
    options: { attempts: 3, backoff: { type: 'exponential', delay: 10_000 }, ...retention },
    everyMs: 60 * minute,
  }),
  /**
   * Deletes processed inbox rows past INBOX_RETENTION_DAYS and settled core webhook history past
   * WEBHOOK_RETENTION_DAYS (nothing while both are 0), and console flashes nobody will read
   * (src/console/flash.ts); hourly.
   */
  'maintenance.purge-expired': job({
    queue: 'maintenance',
    schema: empty,
    options: { attempts: 3, backoff: { type: 'exponential', delay: 10_000 }, ...retention },
    everyMs: 60 * minute,
  }),
  /** Makes the per-connection pull schedulers match the active connections; every 5 minutes. */
  'pull.sync-schedules': job({
    queue: 'pull',
    schema: empty,
    options: { attempts: 1, ...retention },
    everyMs: 5 * minute,
  }),
};

export type JobName = keyof typeof jobCatalog;
export type JobPayload<N extends JobName> = Static<(typeof jobCatalog)[N]['schema']>;
/** The job names a queue runs. */
export type JobNameOf<Q extends QueueName> = {
  [N in JobName]: (typeof jobCatalog)[N]['queue'] extends Q ? N : never;
}[JobName];

/** The repeating jobs of these queues, each with its interval (the scheduler id is the job name). */
export function schedulesOf(
  queues: readonly QueueName[],
  settings: ScheduleSettings,
): Array<{ job: JobName; everyMs: number }> {
  return Object.entries(jobCatalog).flatMap(
    ([name, { queue, everyMs }]: [string, JobDefinition<QueueName, TSchema>]) =>
      everyMs !== undefined && queues.includes(queue)
        ? [{ job: name as JobName, everyMs: typeof everyMs === 'number' ? everyMs : everyMs(settings) }]
        : [],
  );
}

const validators = new Map(Object.entries(jobCatalog).map(([name, def]) => [name, Compile(def.schema)]));

/** The payload, checked against the catalog. A malformed payload can never succeed, so it is not retried. */
export function parseJobPayload<N extends JobName>(name: N, data: unknown): JobPayload<N> {
  const validator = validators.get(name);
  if (!validator) throw new UnrecoverableError(`unknown job ${name}`);
  if (!validator.Check(data)) {
    const first = [...validator.Errors(data)][0];
    throw new UnrecoverableError(
      `invalid payload for ${name}: ${first?.instancePath || '/'} ${first?.message ?? ''}`.trim(),
    );
  }
  return data as JobPayload<N>;
}
