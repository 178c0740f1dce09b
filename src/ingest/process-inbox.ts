/**
 * Processes locked inbox rows inside the caller's transaction: adapter.normalize → sanitation →
 * vehicle mapping → readings (idempotent) → vehicle rows locked → history rollups → latest state
 * (one write of each vehicle row, newer wins per signal) → events → unmapped counts → rows marked
 * processed → the health evaluations owed.
 * Re-running it for the same rows adds nothing.
 *
 * Under load a job takes a few more pending rows with it (one transaction, one statement per
 * table for all of them), which is where most of the throughput comes from; when idle it is
 * exactly one row per job. A batch that fails is retried row by row (isolation.ts).
 */
import type { ProviderAdapter } from '../../providers/types.js';
import { upsertReadingRollups } from '../db/history-rollups.js';
import { copyNewReadings, insertReadings } from '../db/readings.js';
import { lockInboxRows, markInboxProcessed, type InboxOutcome, type InboxRow } from '../db/inbox.js';
import { insertOwedEvaluations } from '../db/owed-evaluations.js';
import type { PoolClient } from '../db/pool.js';
import {
  insertVehicleEvents,
  lockVehiclesForState,
  mapProviderVehicles,
  recordUnmappedSamples,
  writeLatestState,
} from '../db/vehicle-state.js';
import { mergePlans, planIngest, type IngestPlan } from './ingest-plan.js';
import { rejectedCount, sanitizeNormalized, type RejectReason } from './sanitize.js';

export interface RowOutcome extends InboxOutcome {
  inboxId: number;
  provider: string;
  refreshId: string | null;
  /** Samples and events the sanitation dropped, by reason (also counted in `skipped`). */
  rejected: Partial<Record<RejectReason, number>>;
}

export interface IngestOutcome {
  rows: RowOutcome[];
  /**
   * Vehicles whose latest state moved because of rows with cascade on: the health stage
   * evaluates them (a refresh with cascade false stops at the vehicle state).
   */
  cascadeVehicleIds: string[];
  changedVehicleIds: string[];
  /**
   * The health_evaluations_owed rows this outcome's transactions wrote: deleted once their
   * evaluations are enqueued, else the relay enqueues them (src/ingest/owed-evaluations.ts).
   */
  owedIds: number[];
}

/**
 * Rows a job may take with it under load. 32 rows span several reports of each vehicle, so the
 * latest state and the read model are written once per vehicle for all of them: measured, a third
 * less Postgres and Node CPU per sample than 8 rows (docs/performance.md, Ingestion).
 */
export const batchRows = 32;

/** Locks the job's row (and, with `batch`, a few more pending ones) and processes them. */
export async function processInbox(
  tx: PoolClient,
  inboxId: number,
  adapters: Readonly<Record<string, ProviderAdapter>>,
  options: { includeProcessed: boolean; batch: boolean },
): Promise<IngestOutcome> {
  const rows = await lockInboxRows(tx, inboxId, {
    includeProcessed: options.includeProcessed,
    alsoPending: options.batch ? batchRows - 1 : 0,
  });
  return processInboxRows(tx, rows, adapters);
}

export async function processInboxRows(
  tx: PoolClient,
  rows: readonly InboxRow[],
  adapters: Readonly<Record<string, ProviderAdapter>>,
): Promise<IngestOutcome> {
  const outcomes: RowOutcome[] = [];
  const plans: IngestPlan[] = [];
  const cascadeVehicles = new Set<string>();

  const normalizedRows = rows.map((row) => {
    const adapter = adapters[row.provider];
    const normalized = adapter
      ? adapter.normalize({ contentType: row.contentType, body: row.payload }, row.receivedAt)
      : ({ ok: false, reason: `no adapter for provider ${row.provider}` } as const);
    return normalized.ok
      ? {
          row,
          error: null,
          skipped: normalized.skipped.length,
          clean: sanitizeNormalized(normalized.samples, normalized.events, row.receivedAt),
        }
      : { row, error: normalized.reason, skipped: 0, clean: null };
  });
  // One mapping statement for the whole batch (sanitation first: only storable ids reach SQL).
  const wanted = new Map<string, Set<string>>();
  for (const { row, clean } of normalizedRows) {
    if (!clean) continue;
    const ids = wanted.get(row.connectionId) ?? new Set<string>();
    for (const sample of clean.samples) ids.add(sample.providerVehicleId);
    for (const event of clean.events) ids.add(event.providerVehicleId);
    wanted.set(row.connectionId, ids);
  }
  const mapped = await mapProviderVehicles(tx, wanted);

  for (const { row, error, skipped, clean } of normalizedRows) {
    const base = { inboxId: row.id, provider: row.provider, refreshId: row.refreshId };
    if (!clean) {
      outcomes.push({ ...base, samples: 0, skipped: 0, unmapped: 0, rejected: {}, error });
      continue;
    }
    const vehicleIds = mapped.get(row.connectionId) ?? new Map<string, string>();
    const plan = planIngest(clean.samples, clean.events, vehicleIds, row.provider, row.connectionId, row.cascade);
    plans.push(plan);
    if (row.cascade) for (const vehicleId of plan.vehicleIds) cascadeVehicles.add(vehicleId);
    const unmapped = plan.unmapped.reduce((sum, u) => sum + u.samples, 0);
    outcomes.push({
      ...base,
      samples: plan.readings.length,
      skipped: skipped + rejectedCount(clean.rejected),
      unmapped,
      rejected: clean.rejected,
      error: null,
    });
  }

  const plan = mergePlans(plans);
  // Readings lock no vehicle row, so concurrent batches insert them in parallel; then the lock
  // order (db/vehicle-state.ts): the vehicle rows, before any of their state. A batch of new
  // samples is copied; a replay, or a COPY that fails for any other reason, takes the INSERT path.
  const stored = (await copyNewReadings(tx, plan.readings))
    ? plan.readings
    : (await insertReadings(tx, plan.readings)).rolled;
  await lockVehiclesForState(tx, plan.vehicleIds);
  await upsertReadingRollups(tx, stored);
  const vehiclesWithNewState = await writeLatestState(tx, plan.latest);
  const vehiclesWithNewEvents = await insertVehicleEvents(tx, plan.events);
  for (const connectionId of new Set(plan.unmapped.map((u) => u.connectionId))) {
    await recordUnmappedSamples(
      tx,
      connectionId,
      plan.unmapped.filter((u) => u.connectionId === connectionId),
    );
  }
  if (outcomes.length > 0) await markInboxProcessed(tx, outcomes);

  // A vehicle with only new provider events is evaluated too: the monitoring detectors read them.
  const changedVehicleIds = [...new Set([...vehiclesWithNewState, ...vehiclesWithNewEvents])];
  const cascadeVehicleIds = changedVehicleIds.filter((id) => cascadeVehicles.has(id));
  // Last, so the row is as young as the commit: the relay leaves young rows to the job's own enqueue.
  const owedIds =
    changedVehicleIds.length > 0
      ? [
          await insertOwedEvaluations(tx, {
            cascadeVehicleIds,
            noCascadeVehicleIds: changedVehicleIds.filter((id) => !cascadeVehicles.has(id)),
          }),
        ]
      : [];
  return { rows: outcomes, changedVehicleIds, cascadeVehicleIds, owedIds };
}
