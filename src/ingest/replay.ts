/**
 * Re-normalizes stored raw payloads (after an adapter fix, once a vehicle has been mapped, or to
 * retry parked rows). Each row runs in its own transaction through the same code as the ingest
 * worker, so a replay is idempotent: readings already stored are not added again and older
 * samples never overwrite newer state. A row that fails is parked (again) with its error and the
 * replay goes on; a replayed parked row that succeeds is no longer parked.
 */
import type { ProviderAdapter } from '../../providers/types.js';
import { countInbox, listInboxIds, type InboxFilter } from '../db/inbox.js';
import type { Pool } from '../db/pool.js';
import { processRowAlone } from './isolation.js';

export interface ReplayProgress {
  done: number;
  total: number;
}

export interface ReplaySummary {
  rows: number;
  samples: number;
  /** Rows another process held while we passed (a worker processing them right now). */
  busy: number;
  /** Rows the adapter could not normalize (kept with their reason). */
  failed: number;
  /** Rows whose processing failed with an error: parked with it. */
  parked: number;
  changedVehicleIds: string[];
}

const pageSize = 500;

export async function replayInbox(
  pool: Pool,
  adapters: Readonly<Record<string, ProviderAdapter>>,
  filter: InboxFilter,
  onProgress: (progress: ReplayProgress) => void = () => {},
): Promise<ReplaySummary> {
  const total = await countInbox(pool, filter);
  const summary: ReplaySummary = { rows: 0, samples: 0, busy: 0, failed: 0, parked: 0, changedVehicleIds: [] };
  const changed = new Set<string>();
  let afterId = 0;
  onProgress({ done: 0, total });
  for (;;) {
    const ids = await listInboxIds(pool, filter, afterId, pageSize);
    if (ids.length === 0) break;
    for (const id of ids) {
      const { outcome, parked } = await processRowAlone(pool, id, adapters, true);
      summary.rows++;
      const row = outcome.rows[0];
      if (parked) summary.parked++;
      else if (!row) summary.busy++;
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
