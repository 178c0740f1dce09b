/** The pipeline at a glance as the operator API (and `fleetctl status`) shows it. */
import type { PipelineStatus } from '../queue/status.js';

export function presentStatus(status: PipelineStatus, now: Date) {
  return {
    generated_at: now.toISOString(),
    queues: status.queues,
    ingest: {
      pending_rows: status.inbox.pendingRows,
      lag_seconds: Math.round(status.inbox.oldestPendingAgeSeconds * 1000) / 1000,
      parked_rows: status.inbox.parkedRows,
    },
    deliveries: {
      core_open: status.deliveries.coreOpen,
      monitoring_pending: status.deliveries.monitoringPending,
      monitoring_retrying: status.deliveries.monitoringRetrying,
    },
  };
}
