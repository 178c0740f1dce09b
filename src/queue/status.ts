/**
 * What an operator watches: each queue's job counts in Redis and the Postgres backlogs behind
 * them (the inbox waiting to be normalized, deliveries owed). One read, used by
 * GET /admin/v1/status (fleetctl status) and by the gauges on /metrics.
 */
import { Gauge } from 'prom-client';
import type { Queryable } from '../db/pool.js';
import type { Metrics } from '../metrics.js';
import {
  loadDeliveryBacklog,
  loadInboxBacklog,
  type DeliveryBacklog,
  type InboxBacklog,
} from '../db/pipeline-status.js';
import { queueNames, type QueueName } from './catalog.js';
import type { Queues } from './queues.js';

export const jobStates = ['waiting', 'active', 'delayed', 'prioritized', 'failed', 'completed'] as const;
export type JobState = (typeof jobStates)[number];

export interface QueueStatus {
  name: QueueName;
  paused: boolean;
  counts: Record<JobState, number>;
}

export interface PipelineStatus {
  queues: QueueStatus[];
  inbox: InboxBacklog;
  deliveries: DeliveryBacklog;
}

async function queueStatus(queues: Queues, name: QueueName): Promise<QueueStatus> {
  const queue = queues.queue(name);
  const [counts, paused] = await Promise.all([queue.getJobCounts(...jobStates), queue.isPaused()]);
  return {
    name,
    paused,
    counts: Object.fromEntries(jobStates.map((state) => [state, counts[state] ?? 0])) as Record<JobState, number>,
  };
}

export async function loadPipelineStatus(queues: Queues, q: Queryable): Promise<PipelineStatus> {
  const [queueStatuses, inbox, deliveries] = await Promise.all([
    Promise.all(queueNames.map((name) => queueStatus(queues, name))),
    loadInboxBacklog(q),
    loadDeliveryBacklog(q),
  ]);
  return { queues: queueStatuses, inbox, deliveries };
}

/** One status read serves every gauge of a scrape (and scrapes less than a second apart). */
const statusReuseMs = 1_000;

/**
 * Gauges of the pipeline's backlogs on /metrics, read at scrape time. Installed by API processes
 * only (server/service.ts); with several API replicas every one exports the same figures, so
 * dashboards take `max` (docs/grafana).
 */
export function installPipelineGauges(metrics: Metrics, load: () => Promise<PipelineStatus>): void {
  let cached: { at: number; status: Promise<PipelineStatus> } | null = null;
  const current = () => {
    if (!cached || Date.now() - cached.at > statusReuseMs) {
      const status = load();
      status.catch(() => {
        cached = null;
      });
      cached = { at: Date.now(), status };
    }
    return cached.status;
  };
  new Gauge({
    name: 'queue_jobs',
    help: 'Jobs in each queue by state (Redis).',
    labelNames: ['queue', 'state'],
    registers: [metrics.registry],
    async collect() {
      for (const queue of (await current()).queues)
        for (const state of jobStates) this.set({ queue: queue.name, state }, queue.counts[state]);
    },
  });
  new Gauge({
    name: 'ingest_lag_seconds',
    help: 'Age of the oldest inbox row still waiting to be normalized; 0 when none waits.',
    registers: [metrics.registry],
    async collect() {
      this.set((await current()).inbox.oldestPendingAgeSeconds);
    },
  });
  new Gauge({
    name: 'ingest_inbox_rows',
    help: 'Inbox rows waiting to be normalized (pending) and parked for an operator (parked).',
    labelNames: ['state'],
    registers: [metrics.registry],
    async collect() {
      const { inbox } = await current();
      this.set({ state: 'pending' }, inbox.pendingRows);
      this.set({ state: 'parked' }, inbox.parkedRows);
    },
  });
  new Gauge({
    name: 'webhook_deliveries_owed',
    help: 'Deliveries with an attempt owed, by kind (core, monitoring) and status (pending, retrying).',
    labelNames: ['kind', 'status'],
    registers: [metrics.registry],
    async collect() {
      const { deliveries } = await current();
      this.set({ kind: 'core', status: 'pending' }, deliveries.coreOpen);
      this.set({ kind: 'monitoring', status: 'pending' }, deliveries.monitoringPending);
      this.set({ kind: 'monitoring', status: 'retrying' }, deliveries.monitoringRetrying);
    },
  });
}
