/** Operator API: run operations, each a move of the run state machine (409 when illegal). */
import Type, { type TSchema } from 'typebox';
import type { FastifyInstance } from 'fastify';
import { withTransaction, type Pool } from '../../../db/pool.js';
import type { Queues } from '../../../queue/queues.js';
import { afterRunChanges } from '../../../webhooks/queue.js';
import { enqueueHealthEvaluations } from '../../../health/enqueue.js';
import { findRun, findRunCompanyId } from '../../../db/runs.js';
import type { DispatchProposal } from '../../../domain/run.js';
import type { RunOperation } from '../../../runs/run-machine.js';
import { operateRun } from '../../../runs/run-operations.js';
import { presentRun } from '../../presenters/run.js';
import { AppointmentWindow, DispatchProposalBody, OptionalAppointmentWindow } from '../../schemas/admin.js';
import { Envelope, ErrorEnvelope, PathId, meta } from '../../schemas/common.js';
import { Run } from '../../schemas/run.js';
import { adminErrors, adminSecurity, requireOwner } from './shared.js';

interface OperationRoute {
  path: string;
  summary: string;
  body?: TSchema;
  operation: (body: Record<string, unknown>) => RunOperation;
}

const optionalDate = (value: unknown) => (typeof value === 'string' ? new Date(value) : undefined);

const operationRoutes: OperationRoute[] = [
  {
    path: 'propose',
    summary: 'Propose or re-propose an appointment window (run.appointment_updated)',
    body: AppointmentWindow,
    operation: (b) => ({ kind: 'propose', start: new Date(b.start as string), end: new Date(b.end as string) }),
  },
  {
    path: 'confirm',
    summary: 'Confirm the proposed window, or the given one (run.appointment_confirmed)',
    body: OptionalAppointmentWindow,
    operation: (b) => {
      const start = optionalDate(b.start);
      const end = optionalDate(b.end);
      return { kind: 'confirm', ...(start ? { start } : {}), ...(end ? { end } : {}) };
    },
  },
  { path: 'cancel', summary: 'Cancel the appointment (run.appointment_cancelled)', operation: () => ({ kind: 'cancel' }) },
  { path: 'start', summary: 'Start work: open → in_progress', operation: () => ({ kind: 'start' }) },
  { path: 'complete', summary: 'Complete the run (run.completed)', operation: () => ({ kind: 'complete' }) },
  { path: 'reopen', summary: 'Reopen a completed or dismissed run', operation: () => ({ kind: 'reopen' }) },
  { path: 'dismiss', summary: 'Dismiss the run; a live appointment is cancelled', operation: () => ({ kind: 'dismiss' }) },
  {
    path: 'dispatch-proposal',
    summary: 'Propose sending the run to a shop or technician (run.dispatch_proposed)',
    body: DispatchProposalBody,
    operation: (b) => ({
      kind: 'dispatch_proposal',
      assignee: b.assignee as DispatchProposal['assignee'],
      reason: b.reason as string,
    }),
  },
];

export async function runAdminRoutes(app: FastifyInstance, deps: { pool: Pool; queues: Queues; now: () => Date }): Promise<void> {
  for (const route of operationRoutes) {
    app.post(`/runs/:run_id/${route.path}`, {
      schema: {
        tags: ['Operator'],
        summary: route.summary,
        security: adminSecurity,
        params: Type.Object({ run_id: PathId }),
        ...(route.body ? { body: route.body } : {}),
        response: { 200: Envelope(Run), 409: ErrorEnvelope, ...adminErrors },
      },
    }, async (request) => {
      const runId = (request.params as { run_id: string }).run_id;
      const companyId = await requireOwner(deps.pool, runId, 'run', findRunCompanyId);
      const operation = route.operation((request.body ?? {}) as Record<string, unknown>);
      const events = await withTransaction(deps.pool, (tx) => operateRun(tx, companyId, runId, operation, deps.now()));
      if (events.length > 0) await afterRunChanges(deps.queues, request.log, []);
      const run = (await findRun(deps.pool, companyId, runId))!;
      // A completed run's items are services done (maintenance restarts from them); a reopen takes them back.
      if ((operation.kind === 'complete' || operation.kind === 'reopen') && run.vehicleId) {
        await enqueueHealthEvaluations(deps.queues, [run.vehicleId], true).catch((err: unknown) =>
          request.log.warn({ err: (err as Error).message }, 'could not queue the health evaluation; the sweep will catch up'),
        );
      }
      return { success: true, data: presentRun(run), meta: meta(null) };
    });
  }
}
