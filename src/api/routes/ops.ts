/** Liveness, readiness and metrics: unauthenticated, for load balancers and Prometheus. */
import Type from 'typebox';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';
import type { Pool } from '../../db/pool.js';
import { pendingMigrations } from '../../db/migrate.js';
import type { Metrics } from '../../metrics.js';
import { Envelope, ErrorEnvelope, meta } from '../schemas/common.js';
import { errorEnvelope } from '../error-handler.js';

export interface OpsDeps {
  pool: Pool;
  redis: Redis;
  metrics: Metrics;
  migrationIds: readonly string[];
}

const Status = Type.Object({
  status: Type.String(),
  checks: Type.Optional(Type.Record(Type.String(), Type.String())),
});

/** 'ok' or 'failed'; the cause goes to the log only, since /readyz is unauthenticated. */
async function check(name: string, probe: () => Promise<unknown>, log: FastifyBaseLogger): Promise<string> {
  try {
    await probe();
    return 'ok';
  } catch (error) {
    log.warn({ check: name, err: (error as Error).message }, 'readiness check failed');
    return 'failed';
  }
}

export async function opsRoutes(app: FastifyInstance, deps: OpsDeps): Promise<void> {
  app.get('/healthz', {
    schema: { hide: true, response: { 200: Envelope(Status) } },
  }, async () => ({ success: true, data: { status: 'alive' }, meta: meta(null) }));

  app.get('/readyz', {
    schema: { hide: true, response: { 200: Envelope(Status), 503: ErrorEnvelope } },
  }, async (request, reply) => {
    const [postgres, redis, migrations] = await Promise.all([
      check('postgres', () => deps.pool.query('SELECT 1'), request.log),
      check('redis', () => deps.redis.ping(), request.log),
      check('migrations', async () => {
        const pending = await pendingMigrations(deps.pool, deps.migrationIds);
        if (pending.length > 0) throw new Error(`pending ${pending.join(', ')}`);
      }, request.log),
    ]);
    const checks = { postgres, redis, migrations };
    if (Object.values(checks).every((value) => value === 'ok')) {
      return { success: true, data: { status: 'ready', checks }, meta: meta(null) };
    }
    return reply.code(503).send(errorEnvelope('SERVICE_UNAVAILABLE', 'not ready', { checks }));
  });

  app.get('/metrics', {
    schema: { hide: true, response: { 200: Type.String() } },
  }, async (_request, reply) => {
    reply.type(deps.metrics.registry.contentType);
    return deps.metrics.registry.metrics();
  });
}
