/**
 * Prometheus metrics of one process. Every process (API or worker) owns one registry and serves
 * it at GET /metrics.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface Metrics {
  registry: Registry;
  httpDuration: Histogram<'method' | 'route' | 'status'>;
  consoleSignIns: Counter<'outcome'>;
  requestLogDropped: Counter;
  jobDuration: Histogram<'queue' | 'job' | 'outcome'>;
  samplesIngested: Counter<'provider' | 'result'>;
  samplesRejected: Counter<'provider' | 'reason'>;
  inboxParked: Counter<'provider'>;
  inboxBatchesIsolated: Counter;
  inboxAccepted: Counter<'provider'>;
  pushesNotStored: Counter<'provider' | 'reason'>;
  pulls: Counter<'provider' | 'outcome'>;
  webhookDeliveries: Counter<'kind' | 'outcome'>;
  webhookAttemptDuration: Histogram<'kind'>;
  monitoringEventsDetected: Counter<'kind'>;
  monitoringAttempts: Counter<'trigger' | 'outcome'>;
  schedulersRestored: Counter<'job'>;
  replicaLag: Gauge<'replica'>;
  replicaInUse: Gauge<'replica'>;
  readsRouted: Counter<'target'>;
  replicaFallbacks: Counter<'replica'>;
}

export function createMetrics(process: string): Metrics {
  const registry = new Registry();
  registry.setDefaultLabels({ process });
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    httpDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request latency by route and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    consoleSignIns: new Counter({
      name: 'console_sign_ins_total',
      help: 'Console sign-in attempts by outcome: signed_in and wrong_password (the password was checked), limited (429, not checked), busy (503, not checked).',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    requestLogDropped: new Counter({
      name: 'request_log_rows_dropped_total',
      help: "Rows of the console's request log not written: its buffer was full or Postgres refused the batch.",
      registers: [registry],
    }),
    jobDuration: new Histogram({
      name: 'job_duration_seconds',
      help: 'Job processing time by queue, job name and outcome.',
      labelNames: ['queue', 'job', 'outcome'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    samplesIngested: new Counter({
      name: 'samples_ingested_total',
      help: 'Normalized samples by provider and result: stored, skipped (bad value) or unmapped (no vehicle).',
      labelNames: ['provider', 'result'],
      registers: [registry],
    }),
    samplesRejected: new Counter({
      name: 'samples_rejected_total',
      help: 'Samples and events the ingest sanitation dropped (also counted as skipped), by provider and reason.',
      labelNames: ['provider', 'reason'],
      registers: [registry],
    }),
    inboxParked: new Counter({
      name: 'ingest_inbox_parked_total',
      help: 'Inbox rows parked because they failed on their own; they wait for an operator (fleetctl inbox failed).',
      labelNames: ['provider'],
      registers: [registry],
    }),
    inboxBatchesIsolated: new Counter({
      name: 'ingest_batches_isolated_total',
      help: 'Ingest batches that failed and were processed again row by row.',
      registers: [registry],
    }),
    inboxAccepted: new Counter({
      name: 'inbox_payloads_accepted_total',
      help: 'Provider payloads committed to the inbox (pushes and pulled pages).',
      labelNames: ['provider'],
      registers: [registry],
    }),
    pushesNotStored: new Counter({
      name: 'ingest_pushes_not_stored_total',
      help: 'Verified provider pushes not stored: duplicate (a replay within the replay window) or rate_limited.',
      labelNames: ['provider', 'reason'],
      registers: [registry],
    }),
    pulls: new Counter({
      name: 'provider_pulls_total',
      help: 'Provider pull requests by outcome: page, rate_limited or failed.',
      labelNames: ['provider', 'outcome'],
      registers: [registry],
    }),
    webhookDeliveries: new Counter({
      name: 'webhook_deliveries_total',
      help: 'Webhook delivery attempts by kind (core, monitoring) and outcome (succeeded, failed, worker_lost: the worker died after the send started).',
      labelNames: ['kind', 'outcome'],
      registers: [registry],
    }),
    webhookAttemptDuration: new Histogram({
      name: 'webhook_attempt_duration_seconds',
      help: 'Duration of one webhook delivery attempt.',
      labelNames: ['kind'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    monitoringEventsDetected: new Counter({
      name: 'monitoring_events_detected_total',
      help: 'Monitoring events detected and stored for delivery, by kind.',
      labelNames: ['kind'],
      registers: [registry],
    }),
    monitoringAttempts: new Counter({
      name: 'monitoring_attempts_total',
      help: 'Monitoring delivery attempts by trigger (scheduled, manual, recover, worker_lost) and outcome (succeeded, failed).',
      labelNames: ['trigger', 'outcome'],
      registers: [registry],
    }),
    schedulersRestored: new Counter({
      name: 'job_schedulers_restored_total',
      help: 'Repeating jobs whose scheduler was missing in Redis (data lost) and was recreated, by job.',
      labelNames: ['job'],
      registers: [registry],
    }),
    replicaLag: new Gauge({
      name: 'db_replica_lag_seconds',
      help: "How far each read replica is behind the primary, as of the API process's last check; absent while the replica is unreachable.",
      labelNames: ['replica'],
      registers: [registry],
    }),
    replicaInUse: new Gauge({
      name: 'db_replica_in_use',
      help: 'Whether each read replica takes reads (1), or is skipped as lagging, unreachable or not a replica (0).',
      labelNames: ['replica'],
      registers: [registry],
    }),
    readsRouted: new Counter({
      name: 'db_reads_routed_total',
      help: 'Public API requests by where their reads went: primary, or the replica (host:port). Counted only when DATABASE_REPLICA_URLS is set.',
      labelNames: ['target'],
      registers: [registry],
    }),
    replicaFallbacks: new Counter({
      name: 'db_replica_fallbacks_total',
      help: 'Reads that failed on a replica (connection lost or refused, recovery conflict) and were run again on the primary.',
      labelNames: ['replica'],
      registers: [registry],
    }),
  };
}

export { Counter, Histogram };
