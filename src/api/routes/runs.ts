/** GET /runs and GET /runs/{run_id} (docs/api.md). */
import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Pool } from '../../db/pool.js';
import { countRuns, findRun, listRuns } from '../../db/runs.js';
import { schedulingStatusFilter, type RunRecord, type SchedulingState } from '../../domain/run.js';
import { invalidRequest, notFound } from '../../errors.js';
import { presentRun } from '../../presenters/run.js';
import { Envelope, ErrorEnvelope, PageQuery, PathId, StringEnum, authErrorResponses, ok } from '../../web/schemas.js';
import { isRecordId } from '../../domain/ids.js';
import { Run, RunStatusSchema, SchedulingStateSchema } from '../schemas/run.js';

const security = [{ bearerAuth: [] }];

const RunListQuery = Type.Object(
  {
    status: Type.Optional(RunStatusSchema),
    scheduling_state: Type.Optional(SchedulingStateSchema),
    scheduling_status: Type.Optional(
      StringEnum(['confirmed', 'pending', 'proposed', 'same_day_requested'], {
        description: 'Deprecated. pending and same_day_requested map to scheduling_state=requested.',
      }),
    ),
    updated_since: Type.Optional(PageQuery.updated_since),
    limit: PageQuery.limit,
    offset: PageQuery.offset,
  },
  { additionalProperties: false },
);

/** The scheduling_state to filter on, from the canonical parameter or its deprecated alias. */
function schedulingFilter(query: { scheduling_state?: string; scheduling_status?: string }): SchedulingState | null {
  const canonical = (query.scheduling_state as SchedulingState | undefined) ?? null;
  const alias = query.scheduling_status
    ? schedulingStatusFilter[query.scheduling_status as keyof typeof schedulingStatusFilter]
    : null;
  if (canonical && alias && canonical !== alias) {
    throw invalidRequest([
      { field: 'scheduling_status', message: `maps to ${alias}, which contradicts scheduling_state=${canonical}` },
    ]);
  }
  return canonical ?? alias;
}

/** The caller's run, or 404 (another company's run is not found either). */
async function requireRun(pool: Pool, companyId: string, runId: string): Promise<RunRecord> {
  const run = isRecordId(runId) ? await findRun(pool, companyId, runId) : null;
  if (!run) throw notFound('run');
  return run;
}

export const runRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/runs',
    {
      schema: {
        tags: ['Runs'],
        operationId: 'listRuns',
        summary: 'List runs, newest activity first',
        security,
        querystring: RunListQuery,
        response: { 200: Envelope(Type.Array(Run)), 400: ErrorEnvelope, ...authErrorResponses },
      },
    },
    async (request) => {
      const { query } = request;
      const filter = {
        status: query.status ?? null,
        schedulingState: schedulingFilter(query),
        updatedSince: query.updated_since ? new Date(query.updated_since) : null,
      };
      const { companyId } = request.principal;
      const [runs, total] = await Promise.all([
        listRuns(request.readPool, companyId, filter, query.limit, query.offset),
        countRuns(request.readPool, companyId, filter),
      ]);
      return ok(runs.map(presentRun), { limit: query.limit, offset: query.offset, total });
    },
  );

  app.get(
    '/runs/:run_id',
    {
      schema: {
        tags: ['Runs'],
        operationId: 'getRun',
        summary: 'Get one run',
        security,
        params: Type.Object({ run_id: PathId }),
        response: { 200: Envelope(Run), 404: ErrorEnvelope, ...authErrorResponses },
      },
    },
    async (request) => {
      const run = await requireRun(request.readPool, request.principal.companyId, request.params.run_id);
      return ok(presentRun(run));
    },
  );
};
