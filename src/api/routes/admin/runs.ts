/** Operator API: run operations, each a move of the run state machine (409 when illegal). */
import Type, { type Static, type TSchema } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { withTransaction, type Pool } from '../../../db/pool.js';
import type { Queues } from '../../../queue/queues.js';
import { afterRunChanges } from '../../../queue/enqueue-runs.js';
import { enqueueHealthEvaluations } from '../../../queue/enqueue-health.js';
import { findRun, findRunCompanyId } from '../../../db/runs.js';
import type { RunOperation } from '../../../runs/run-machine.js';
import { operateRun } from '../../../runs/run-operations.js';
import { presentRun } from '../../../presenters/run.js';
import { AppointmentWindow, DispatchProposalBody, OptionalAppointmentWindow } from '../../schemas/admin.js';
import { Envelope, ErrorEnvelope, PathId, ok } from '../../../web/schemas.js';
import { Run } from '../../schemas/run.js';
import { adminErrors, adminSecurity, requireOwner } from './shared.js';
import { enqueueAfterCommit } from '../../../queue/after-commit.js';

interface OperationRoute {
  path: string;
  operationId: string;
  summary: string;
  body?: TSchema;
  operation: (body: never) => RunOperation;
}

/** An operation whose `operation` receives the body its schema validated (none: `{}`). */
function operationRoute<T extends TSchema = TSchema>(r: {
  path: string;
  operationId: string;
  summary: string;
  body?: T;
  operation: (body: Static<T>) => RunOperation;
}): OperationRoute {
  return r;
}

const operationRoutes: OperationRoute[] = [
  operationRoute({
    path: 'propose',
    operationId: 'adminProposeRun',
    summary: 'Propose or re-propose an appointment window (run.appointment_updated)',
    body: AppointmentWindow,
    operation: (b) => ({ kind: 'propose', start: new Date(b.start), end: new Date(b.end) }),
  }),
  operationRoute({
    path: 'confirm',
    operationId: 'adminConfirmRun',
    summary: 'Confirm the proposed window, or the given one (run.appointment_confirmed)',
    body: OptionalAppointmentWindow,
    operation: (b) => ({
      kind: 'confirm',
      ...(b.start ? { start: new Date(b.start) } : {}),
      ...(b.end ? { end: new Date(b.end) } : {}),
    }),
  }),
  operationRoute({
    path: 'cancel',
    operationId: 'adminCancelRun',
    summary: 'Cancel the appointment (run.appointment_cancelled)',
    operation: () => ({ kind: 'cancel' }),
  }),
  operationRoute({
    path: 'start',
    operationId: 'adminStartRun',
    summary: 'Start work: open → in_progress',
    operation: () => ({ kind: 'start' }),
  }),
  operationRoute({
    path: 'complete',
    operationId: 'adminCompleteRun',
    summary: 'Complete the run (run.completed)',
    operation: () => ({ kind: 'complete' }),
  }),
  operationRoute({
    path: 'reopen',
    operationId: 'adminReopenRun',
    summary: 'Reopen a completed or dismissed run',
    operation: () => ({ kind: 'reopen' }),
  }),
  operationRoute({
    path: 'dismiss',
    operationId: 'adminDismissRun',
    summary: 'Dismiss the run; a live appointment is cancelled',
    operation: () => ({ kind: 'dismiss' }),
  }),
  operationRoute({
    path: 'dispatch-proposal',
    operationId: 'adminProposeRunDispatch',
    summary: 'Propose sending the run to a shop or technician (run.dispatch_proposed)',
    body: DispatchProposalBody,
    operation: (b) => ({ kind: 'dispatch_proposal', assignee: b.assignee, reason: b.reason }),
  }),
];

export const runAdminRoutes: FastifyPluginAsyncTypebox<{ pool: Pool; queues: Queues; now: () => Date }> = async (
  app,
  deps,
) => {
  for (const route of operationRoutes) {
    app.post(
      `/runs/:run_id/${route.path}`,
      {
        schema: {
          tags: ['Operator'],
          operationId: route.operationId,
          summary: route.summary,
          security: adminSecurity,
          params: Type.Object({ run_id: PathId }),
          ...(route.body ? { body: route.body } : {}),
          response: { 200: Envelope(Run), 409: ErrorEnvelope, ...adminErrors },
        },
      },
      async (request) => {
        const runId = request.params.run_id;
        const companyId = await requireOwner(deps.pool, runId, 'run', findRunCompanyId);
        // Validated against route.body by then, so it is the body route.operation was written for.
        const operation = route.operation((request.body ?? {}) as never);
        const events = await withTransaction(deps.pool, (tx) =>
          operateRun(tx, companyId, runId, operation, deps.now()),
        );
        if (events.length > 0) await afterRunChanges(deps.queues, request.log, []);
        const run = (await findRun(deps.pool, companyId, runId))!;
        // A completed run's items are services done (maintenance restarts from them); a reopen takes them back.
        if ((operation.kind === 'complete' || operation.kind === 'reopen') && run.vehicleId) {
          const vehicleId = run.vehicleId;
          await enqueueAfterCommit(request.log, 'health.sweep', () =>
            enqueueHealthEvaluations(deps.queues, [vehicleId], true),
          );
        }
        return ok(presentRun(run));
      },
    );
  }
};
