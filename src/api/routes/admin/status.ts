/**
 * Operator API: the pipeline at a glance (queue depths in Redis, ingest lag and delivery backlogs
 * in Postgres). `fleetctl status` shows it, `--watch` live.
 */
import Type from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Pool } from '../../../db/pool.js';
import { queueNames } from '../../../queue/catalog.js';
import type { Queues } from '../../../queue/queues.js';
import { jobStates, loadPipelineStatus } from '../../../queue/status.js';
import { Envelope, StringEnum, Timestamp, meta } from '../../../web/schemas.js';
import { adminErrors, adminSecurity } from './shared.js';
import { presentStatus } from '../../../presenters/pipeline-status.js';

const Count = Type.Integer({ minimum: 0 });

const StatusView = Type.Object({
  generated_at: Timestamp,
  queues: Type.Array(
    Type.Object({
      name: StringEnum(queueNames),
      paused: Type.Boolean(),
      counts: Type.Object(Object.fromEntries(jobStates.map((state) => [state, Count]))),
    }),
  ),
  ingest: Type.Object({
    pending_rows: Count,
    lag_seconds: Type.Number({ description: 'Age of the oldest inbox row still waiting; 0 when none waits.' }),
    parked_rows: Count,
  }),
  deliveries: Type.Object({
    core_open: Count,
    monitoring_pending: Count,
    monitoring_retrying: Count,
  }),
});

export async function statusAdminRoutes(
  fastify: FastifyInstance,
  deps: { pool: Pool; queues: Queues; now: () => Date },
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/status',
    {
      schema: {
        tags: ['Operator'],
        operationId: 'adminGetStatus',
        summary: 'Queue depths, ingest lag and delivery backlogs',
        security: adminSecurity,
        response: { 200: Envelope(StatusView), ...adminErrors },
      },
    },
    async () => ({
      success: true,
      data: presentStatus(await loadPipelineStatus(deps.queues, deps.pool), deps.now()),
      meta: meta(null),
    }),
  );
}
