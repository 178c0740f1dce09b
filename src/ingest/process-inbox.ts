/**
 * Processes one inbox row inside the caller's transaction: adapter.normalize → vehicle mapping →
 * readings (idempotent) → latest state (newer wins) → read model → events → unmapped counts →
 * row marked processed. Re-running it for the same row adds nothing.
 */
import type { ProviderAdapter } from '../../providers/types.js';
import { insertReadings } from '../db/readings.js';
import { lockInboxRow, markInboxProcessed } from '../db/inbox.js';
import type { PoolClient } from '../db/pool.js';
import { applyVehicleState, insertVehicleEvents, mapProviderVehicles, recordUnmappedSamples, upsertLatestSignals } from '../db/vehicle-state.js';
import { planIngest } from './ingest-plan.js';

export interface IngestOutcome {
  inboxId: number;
  provider: string;
  samples: number;
  skipped: number;
  unmapped: number;
  /** Vehicles whose latest state moved: the health stage evaluates them (unless cascade is off). */
  changedVehicleIds: string[];
  cascade: boolean;
  refreshId: string | null;
  error: string | null;
}

export async function processInboxRow(
  tx: PoolClient,
  inboxId: number,
  adapters: Readonly<Record<string, ProviderAdapter>>,
  options: { includeProcessed: boolean },
): Promise<IngestOutcome | null> {
  const row = await lockInboxRow(tx, inboxId, options.includeProcessed);
  if (!row) return null;
  const done = (outcome: Omit<IngestOutcome, 'inboxId' | 'provider' | 'cascade' | 'refreshId'>): IngestOutcome => ({
    inboxId, provider: row.provider, cascade: row.cascade, refreshId: row.refreshId, ...outcome,
  });

  const adapter = adapters[row.provider];
  const normalized = adapter
    ? adapter.normalize({ contentType: row.contentType, body: row.payload }, row.receivedAt)
    : ({ ok: false, reason: `no adapter for provider ${row.provider}` } as const);
  if (!normalized.ok) {
    await markInboxProcessed(tx, inboxId, { samples: 0, skipped: 0, unmapped: 0, error: normalized.reason });
    return done({ samples: 0, skipped: 0, unmapped: 0, changedVehicleIds: [], error: normalized.reason });
  }

  const providerVehicleIds = [...new Set([...normalized.samples, ...normalized.events].map((s) => s.providerVehicleId))];
  const vehicleIds = await mapProviderVehicles(tx, row.connectionId, providerVehicleIds);
  const plan = planIngest(normalized.samples, normalized.events, vehicleIds, row.provider, row.receivedAt);

  await insertReadings(tx, plan.readings);
  const changes = await upsertLatestSignals(tx, plan.latest);
  await applyVehicleState(tx, changes, new Map(plan.vehicles.map((v) => [v.vehicleId, v])));
  await insertVehicleEvents(tx, plan.events);
  await recordUnmappedSamples(tx, row.connectionId, plan.unmapped);

  const unmapped = plan.unmapped.reduce((sum, u) => sum + u.samples, 0);
  const skipped = normalized.skipped.length + plan.rejected;
  await markInboxProcessed(tx, inboxId, { samples: plan.readings.length, skipped, unmapped, error: null });
  return done({ samples: plan.readings.length, skipped, unmapped, changedVehicleIds: changes.map((c) => c.vehicleId), error: null });
}
