/**
 * The runs stage of health events: opens (or folds into the open run) a service request per
 * vehicle whose health events ask for one (critical status, overdue maintenance), per company
 * setting, and marks the events consumed in the same transaction. The plan is pure
 * (requests-from-health.ts); this module loads, persists and pages.
 */
import { withTransaction, type Pool } from '../db/pool.js';
import { lockPendingHealthEvents, markHealthEventsConsumed } from '../db/runs-stage.js';
import { AppError } from '../errors.js';
import { planHealthRequests } from './requests-from-health.js';
import { submitServiceRequest } from './service-requests.js';

const healthEventBatch = 200;

export type CreatedRun = { companyId: string; runId: string };

/**
 * Consumes every pending health event, a page per transaction. `afterCommit` gets the runs each
 * page created once that page is committed, so a later page that fails does not hold them back.
 */
export async function consumeHealthEvents(
  pool: Pool,
  afterCommit: (created: CreatedRun[]) => Promise<void>,
): Promise<{ consumed: number; runsCreated: number }> {
  let consumed = 0;
  let runsCreated = 0;
  for (;;) {
    const created: CreatedRun[] = [];
    const batch = await withTransaction(pool, async (tx) => {
      const events = await lockPendingHealthEvents(tx, healthEventBatch);
      const enabled = events.filter((e) => e.requestsEnabled);
      const requests = planHealthRequests(enabled, new Map(enabled.map((e) => [e.vehicleId, e.currentAlerts])));
      const companyOf = new Map(events.map((e) => [e.vehicleId, e.companyId]));
      // Vehicles in id order: service requests lock vehicle rows, and a fixed order avoids deadlocks.
      for (const [vehicleId, items] of [...requests].sort(([a], [b]) => (a < b ? -1 : 1))) {
        const companyId = companyOf.get(vehicleId)!;
        try {
          const outcome = await submitServiceRequest(tx, companyId, {
            vehicleId,
            title: 'Service requested by vehicle health',
            description: null,
            items,
            customer: null,
            preferredStart: null,
            preferredEnd: null,
            location: null,
          });
          if (!outcome.folded) created.push({ companyId, runId: outcome.runId });
        } catch (error) {
          // A deactivated vehicle gets no runs; anything else is a real failure.
          if (!(error instanceof AppError)) throw error;
        }
      }
      await markHealthEventsConsumed(
        tx,
        events.map((e) => e.id),
      );
      return events.length;
    });
    consumed += batch;
    runsCreated += created.length;
    if (created.length > 0) await afterCommit(created);
    if (batch < healthEventBatch) return { consumed, runsCreated };
  }
}
