/**
 * Operator API: the pipeline at a glance (queue depths in Redis, ingest lag and delivery backlogs
 * in Postgres, and where the answering API process sends reads). `fleetctl status` shows it,
 * `--watch` live.
 */
import Type from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Pool } from '../../../db/pool.js';
import { replicaStates, type ReadRouter } from '../../../db/read-routing.js';
import { queueNames } from '../../../queue/catalog.js';
import type { Queues } from '../../../queue/queues.js';
import { jobStates, loadPipelineStatus } from '../../../queue/status.js';
import {
  Envelope,
  NullableString,
  NullableTimestamp,
  Nullable,
  StringEnum,
  Timestamp,
  meta,
} from '../../../web/schemas.js';
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
  reads: Type.Object(
    {
      to_primary: Count,
      to_replicas: Count,
      replicas: Type.Array(
        Type.Object({
          name: Type.String({ description: 'host:port' }),
          state: StringEnum(replicaStates, { description: 'Only in_use takes reads.' }),
          lag_ms: Nullable(Type.Integer({ minimum: 0 })),
          replay_lsn: NullableString,
          checked_at: NullableTimestamp,
          error: NullableString,
        }),
      ),
    },
    {
      description:
        'Public API requests whose reads this API process sent to the primary and to replicas since it started, and the replicas (DATABASE_REPLICA_URLS) as it last checked them.',
    },
  ),
});

export async function statusAdminRoutes(
  fastify: FastifyInstance,
  deps: { pool: Pool; queues: Queues; reads: ReadRouter; now: () => Date },
): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/status',
    {
      schema: {
        tags: ['Operator'],
        operationId: 'adminGetStatus',
        summary: 'Queue depths, ingest lag, delivery backlogs and read replicas',
        security: adminSecurity,
        response: { 200: Envelope(StatusView), ...adminErrors },
      },
    },
    async () => ({
      success: true,
      data: presentStatus(await loadPipelineStatus(deps.queues, deps.pool), await deps.reads.routing(), deps.now()),
      meta: meta(null),
    }),
  );
}
