/** The pipeline at a glance as the operator API (and `fleetctl status`) shows it. */
import type { ReadRouting } from '../db/read-routing.js';
import type { PipelineStatus } from '../queue/status.js';

export function presentStatus(status: PipelineStatus, reads: ReadRouting, now: Date) {
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
    reads: {
      to_primary: reads.readsToPrimary,
      to_replicas: reads.readsToReplicas,
      replicas: reads.replicas.map((replica) => ({
        name: replica.name,
        state: replica.state,
        lag_ms: replica.lagMs,
        replay_lsn: replica.replayLsn,
        checked_at: replica.checkedAt?.toISOString() ?? null,
        error: replica.error,
      })),
    },
  };
}
