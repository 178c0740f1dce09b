/**
 * Re-normalizes stored raw payloads (after an adapter fix, or once a vehicle has been mapped).
 * Each row runs in its own transaction through the same code as the ingest worker, so a replay
 * is idempotent: readings already stored are not added again and older samples never overwrite
 * newer state.
 */
import type { ProviderAdapter } from '../../providers/types.js';
import { countInboxSince, listInboxIdsSince } from '../db/inbox.js';
import { withTransaction, type Pool } from '../db/pool.js';
import { processInbox } from './process-inbox.js';

export interface ReplayProgress {
  done: number;
  total: number;
}

export interface ReplaySummary {
  rows: number;
  samples: number;
  /** Rows another process held while we passed (a worker processing them right now). */
  busy: number;
  failed: number;
  changedVehicleIds: string[];
}

const pageSize = 500;

export async function replayInbox(
  pool: Pool,
  adapters: Readonly<Record<string, ProviderAdapter>>,
  filter: { since: Date; provider: string | null },
  onProgress: (progress: ReplayProgress) => void = () => {},
): Promise<ReplaySummary> {
  const total = await countInboxSince(pool, filter.since, filter.provider);
  const summary: ReplaySummary = { rows: 0, samples: 0, busy: 0, failed: 0, changedVehicleIds: [] };
  const changed = new Set<string>();
  let afterId = 0;
  onProgress({ done: 0, total });
  for (;;) {
    const ids = await listInboxIdsSince(pool, filter.since, filter.provider, afterId, pageSize);
    if (ids.length === 0) break;
    for (const id of ids) {
      const outcome = await withTransaction(pool, (tx) => processInbox(tx, id, adapters, { includeProcessed: true, batch: false }));
      summary.rows++;
      const row = outcome.rows[0];
      if (!row) summary.busy++;
      else if (row.error) summary.failed++;
      else summary.samples += row.samples;
      for (const vehicleId of outcome.changedVehicleIds) changed.add(vehicleId);
      onProgress({ done: summary.rows, total: Math.max(total, summary.rows) });
    }
    afterId = ids.at(-1)!;
  }
  summary.changedVehicleIds = [...changed];
  return summary;
}
