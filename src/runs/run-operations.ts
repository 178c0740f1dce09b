import type { RunEventKind } from '../domain/run.js';
import { AppError, notFound } from '../errors.js';
import { lockRun, updateRunState } from '../db/runs.js';
import type { PoolClient } from '../db/pool.js';
import { applyRunOperation, type RunOperation } from './run-machine.js';

/** Loads and locks the run, applies the pure state machine, persists the result. */
export async function operateRun(
  tx: PoolClient,
  companyId: string,
  runId: string,
  operation: RunOperation,
  now: Date,
): Promise<RunEventKind[]> {
  const run = await lockRun(tx, companyId, runId);
  if (!run) throw notFound('run');
  const transition = applyRunOperation(run, operation, now);
  if (!transition.ok) throw new AppError('INVALID_STATE_TRANSITION', transition.message);
  await updateRunState(tx, run.id, transition.state);
  return transition.events;
}
