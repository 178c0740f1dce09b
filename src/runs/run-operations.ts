import type { RunEventKind } from '../domain/run.js';
import { AppError, notFound } from '../errors.js';
import { findRun, hasOtherOpenRun, lockRun, stampCompletedOdometer, updateRunState } from '../db/runs.js';
import { lockVehicle } from '../db/vehicles.js';
import type { PoolClient } from '../db/pool.js';
import { recordRunEvents } from '../webhooks/outbox.js';
import { applyRunOperation, type RunOperation } from './run-machine.js';

/**
 * Loads and locks the run, applies the pure state machine, persists the result and writes the
 * events it emits to the outbox, all in the caller's transaction.
 */
export async function operateRun(
  tx: PoolClient,
  companyId: string,
  runId: string,
  operation: RunOperation,
  now: Date,
): Promise<RunEventKind[]> {
  // A vehicle has at most one open run (service requests fold into it); the vehicle lock
  // serialises the reopen check with concurrent service requests. Taken before the run's, the
  // lock order of every vehicle writer (src/db/vehicle-state.ts); a run's vehicle never changes.
  const vehicleId = operation.kind === 'reopen' ? (await findRun(tx, companyId, runId))?.vehicleId : null;
  if (vehicleId) await lockVehicle(tx, companyId, vehicleId);
  const run = await lockRun(tx, companyId, runId);
  if (!run) throw notFound('run');
  if (vehicleId) {
    if (await hasOtherOpenRun(tx, vehicleId, run.id)) {
      throw new AppError('INVALID_STATE_TRANSITION', 'cannot reopen: the vehicle has another open run');
    }
  }
  const transition = applyRunOperation(run, operation, now);
  if (!transition.ok) throw new AppError('INVALID_STATE_TRANSITION', transition.message);
  await updateRunState(tx, run.id, transition.state);
  if (transition.state.status === 'completed' && run.status !== 'completed') await stampCompletedOdometer(tx, run.id);
  await recordRunEvents(tx, companyId, run.id, transition.events);
  return transition.events;
}
