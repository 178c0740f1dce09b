/**
 * The dispatch stage: asks the pure dispatch assistant (dispatch-assistant.ts) about a new run and
 * records its proposal through the run state machine; and the sweep that re-asks about runs whose
 * request was lost.
 */
import { withTransaction, type Pool } from '../db/pool.js';
import { lockRun } from '../db/runs.js';
import { claimDispatchCheck, countOpenRunsByAssignee, listRoster, listRunsAwaitingDispatch } from '../db/runs-stage.js';
import { findRunLocations } from '../db/service-locations.js';
import type { Queues } from '../queue/queues.js';
import { requestDispatch } from '../queue/enqueue-runs.js';
import { proposeDispatch } from './dispatch-assistant.js';
import { operateRun } from './run-operations.js';

/** The request made right after a run was created normally runs within this; the sweep waits for it. */
const dispatchGraceMs = 60_000;

/**
 * Proposes an assignee for the run, once per run (`dispatch_checked_at`). False when nothing was
 * proposed: already checked, no longer open, proposed by an operator, empty roster or nobody fits.
 */
export async function proposeDispatchForRun(pool: Pool, companyId: string, runId: string, now: Date): Promise<boolean> {
  return withTransaction(pool, async (tx) => {
    // Locked, so a proposal an operator records meanwhile is seen, not overwritten.
    const run = await lockRun(tx, companyId, runId);
    if (!run || !(await claimDispatchCheck(tx, runId))) return false;
    if (run.dispatchProposal || !['open', 'in_progress'].includes(run.status)) return false;
    const roster = await listRoster(tx, companyId);
    if (roster.length === 0) return false;
    const located = (await findRunLocations(tx, runId)).find(
      (l) => l.location.latitude !== null && l.location.longitude !== null,
    );
    const proposal = proposeDispatch({
      itemTypes: run.items.map((item) => item.type),
      location: located ? { latitude: located.location.latitude!, longitude: located.location.longitude! } : null,
      roster,
      openRunsByAssignee: await countOpenRunsByAssignee(tx, companyId),
    });
    if (!proposal) return false;
    await operateRun(
      tx,
      companyId,
      runId,
      { kind: 'dispatch_proposal', assignee: proposal.assignee, reason: proposal.reason },
      now,
    );
    return true;
  });
}

/** Re-requests dispatch for runs the assistant never looked at; returns how many. */
export async function requestLostDispatches(pool: Pool, queues: Queues, now: Date): Promise<number> {
  const runs = await listRunsAwaitingDispatch(pool, new Date(now.getTime() - dispatchGraceMs), 1000);
  await requestDispatch(queues, runs);
  return runs.length;
}
