/**
 * Liveness, readiness and metrics, for load balancers and Prometheus: unauthenticated, except
 * /metrics when METRICS_TOKEN is set (it tells queue depths, tenants' delivery outcomes and
 * latencies to whoever asks).
 */
import Type from 'typebox';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { RedisConnection } from '../../queue/connection.js';
import type { Pool } from '../../db/pool.js';
import { pendingMigrations } from '../../db/migrate.js';
import type { Metrics } from '../../metrics.js';
import { fixedTokenAuthentication } from '../auth.js';
import { Envelope, ErrorEnvelope, meta, ok } from '../../web/schemas.js';
import { errorEnvelope } from '../../web/error-handler.js';

export interface OpsDeps {
  pool: Pool;
  redis: RedisConnection;
  metrics: Metrics;
  migrationIds: readonly string[];
  /** When set, GET /metrics asks for it as a bearer token. */
  metricsToken: string | null;
  /** More readiness checks by name (a worker process: `schedules`); each throws when not ready. */
  readiness?: Readonly<Record<string, () => Promise<unknown>>>;
}

/** A probe that has not answered by then counts as failed: a readiness answer never waits on a dead Redis. */
const probeTimeoutMs = 2000;

const Status = Type.Object({
  status: Type.String(),
  checks: Type.Optional(Type.Record(Type.String(), Type.String())),
});

/** 'ok' or 'failed'; the cause goes to the log only, since /readyz is unauthenticated. */
async function check(name: string, probe: () => Promise<unknown>, log: FastifyBaseLogger): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${probeTimeoutMs} ms`)), probeTimeoutMs);
  });
  try {
    await Promise.race([probe(), timeout]);
    return 'ok';
  } catch (error) {
    log.warn({ check: name, err: (error as Error).message }, 'readiness check failed');
    return 'failed';
  } finally {
    clearTimeout(timer);
  }
}

export async function opsRoutes(app: FastifyInstance, deps: OpsDeps): Promise<void> {
  app.get(
    '/healthz',
    {
      schema: { hide: true, response: { 200: Envelope(Status) } },
    },
    async () => ok({ status: 'alive' }),
  );

  app.get(
    '/readyz',
    {
      schema: { hide: true, response: { 200: Envelope(Status), 503: ErrorEnvelope } },
    },
    async (request, reply) => {
      const probes: Record<string, () => Promise<unknown>> = {
        postgres: () => deps.pool.query('SELECT 1'),
        redis: () => deps.redis.ping(),
        migrations: async () => {
          const pending = await pendingMigrations(deps.pool, deps.migrationIds);
          if (pending.length > 0) throw new Error(`pending ${pending.join(', ')}`);
        },
        ...deps.readiness,
      };
      const results = await Promise.all(
        Object.entries(probes).map(async ([name, probe]) => [name, await check(name, probe, request.log)] as const),
      );
      const checks = Object.fromEntries(results);
      if (Object.values(checks).every((value) => value === 'ok')) {
        return { success: true, data: { status: 'ready', checks }, meta: meta(null) };
      }
      return reply.code(503).send(errorEnvelope('SERVICE_UNAVAILABLE', 'not ready', { checks }));
    },
  );

  app.get(
    '/metrics',
    {
      schema: { hide: true, response: { 200: Type.String(), 401: ErrorEnvelope } },
      ...(deps.metricsToken
        ? {
            onRequest: fixedTokenAuthentication(
              deps.metricsToken,
              'missing or invalid metrics token: send Authorization: Bearer <METRICS_TOKEN>',
            ),
          }
        : {}),
    },
    async (_request, reply) => {
      reply.type(deps.metrics.registry.contentType);
      return deps.metrics.registry.metrics();
    },
  );
}
