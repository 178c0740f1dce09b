/**
 * Processes inbox rows inside the caller's transaction: adapter.normalize → vehicle mapping →
 * readings (idempotent) → latest state (newer wins) → read model → events → unmapped counts →
 * rows marked processed. Re-running it for the same rows adds nothing.
 *
 * Under load a job takes a few more pending rows with it (one transaction, one statement per
 * table for all of them), which is where most of the throughput comes from; when idle it is
 * exactly one row per job.
 */
import type { ProviderAdapter } from '../../providers/types.js';
import { insertReadings } from '../db/readings.js';
import { lockInboxRows, markInboxProcessed, type InboxOutcome } from '../db/inbox.js';
import type { PoolClient } from '../db/pool.js';
import { applyVehicleState, insertVehicleEvents, mapProviderVehicles, recordUnmappedSamples, upsertLatestSignals } from '../db/vehicle-state.js';
import { mergePlans, planIngest, type IngestPlan } from './ingest-plan.js';

export interface RowOutcome extends InboxOutcome {
  inboxId: number;
  provider: string;
  refreshId: string | null;
}

export interface IngestOutcome {
  rows: RowOutcome[];
  /**
   * Vehicles whose latest state moved because of rows with cascade on: the health stage
   * evaluates them (a refresh with cascade false stops at the vehicle state).
   */
  cascadeVehicleIds: string[];
  changedVehicleIds: string[];
}

/** Extra pending rows a job may take with it. */
const batchRows = 8;

export async function processInbox(
  tx: PoolClient,
  inboxId: number,
  adapters: Readonly<Record<string, ProviderAdapter>>,
  options: { includeProcessed: boolean; batch: boolean },
): Promise<IngestOutcome> {
  const rows = await lockInboxRows(tx, inboxId, { includeProcessed: options.includeProcessed, alsoPending: options.batch ? batchRows - 1 : 0 });
  const outcomes: RowOutcome[] = [];
  const plans: IngestPlan[] = [];
  const cascadeVehicles = new Set<string>();
  const mappings = new Map<string, Map<string, string>>();

  for (const row of rows) {
    const base = { inboxId: row.id, provider: row.provider, refreshId: row.refreshId };
    const adapter = adapters[row.provider];
    const normalized = adapter
      ? adapter.normalize({ contentType: row.contentType, body: row.payload }, row.receivedAt)
      : ({ ok: false, reason: `no adapter for provider ${row.provider}` } as const);
    if (!normalized.ok) {
      outcomes.push({ ...base, samples: 0, skipped: 0, unmapped: 0, error: normalized.reason });
      continue;
    }
    const providerVehicleIds = [...new Set([...normalized.samples, ...normalized.events].map((s) => s.providerVehicleId))];
    const known = mappings.get(row.connectionId) ?? new Map<string, string>();
    const missing = providerVehicleIds.filter((id) => !known.has(id));
    for (const [providerVehicleId, vehicleId] of await mapProviderVehicles(tx, row.connectionId, missing)) known.set(providerVehicleId, vehicleId);
    mappings.set(row.connectionId, known);

    const plan = planIngest(normalized.samples, normalized.events, known, row.provider, row.receivedAt, row.connectionId);
    plans.push(plan);
    if (row.cascade) for (const vehicle of plan.vehicles) cascadeVehicles.add(vehicle.vehicleId);
    const unmapped = plan.unmapped.reduce((sum, u) => sum + u.samples, 0);
    outcomes.push({ ...base, samples: plan.readings.length, skipped: normalized.skipped.length + plan.rejected, unmapped, error: null });
  }

  const plan = mergePlans(plans);
  await insertReadings(tx, plan.readings);
  const changes = await upsertLatestSignals(tx, plan.latest);
  await applyVehicleState(tx, changes, new Map(plan.vehicles.map((v) => [v.vehicleId, v])));
  await insertVehicleEvents(tx, plan.events);
  for (const connectionId of new Set(plan.unmapped.map((u) => u.connectionId))) {
    await recordUnmappedSamples(tx, connectionId, plan.unmapped.filter((u) => u.connectionId === connectionId));
  }
  if (outcomes.length > 0) await markInboxProcessed(tx, outcomes);

  const changedVehicleIds = changes.map((c) => c.vehicleId);
  return { rows: outcomes, changedVehicleIds, cascadeVehicleIds: changedVehicleIds.filter((id) => cascadeVehicles.has(id)) };
}
