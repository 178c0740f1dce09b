/**
 * buildApp(deps) assembles the HTTP application and never listens; the entry point does.
 * Route groups are encapsulated plugins: ops (no auth), the public API under /api/v1 (docs/api.md) and
 * /v1 with the same API keys and per-key rate limit, and the operator API under
 * /admin/v1 (ADMIN_TOKEN; absent when unset), and the developer console's pages under /console.
 */
import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import sensible from '@fastify/sensible';
import rateLimit from '@fastify/rate-limit';
import type { RedisConnection } from '../queue/connection.js';
import type { Config } from '../config.js';
import { CpuPool } from '../cpu-pool/pool.js';
import type { Pool } from '../db/pool.js';
import { ReadRouter } from '../db/read-routing.js';
import { rateLimited } from '../errors.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { Queues } from '../queue/queues.js';
import { ConnectionCache } from '../ingest/connection-cache.js';
import { RequestLogRecorder, requestLogRow } from '../request-log/recorder.js';
import { ApiKeyCache } from '../api-keys/api-key-cache.js';
import { KeyRateLimiter } from './key-rate-limiter.js';
import { VehicleJsonCache } from './vehicle-json-cache.js';
import { adminAuthentication, apiKeyAuthentication } from './auth.js';
import { clientErrorHandler, frameworkErrorHandler, installErrorHandlers } from '../web/error-handler.js';
import { installJsonBodies } from './json-body.js';
import { registerOpenApi } from './openapi.js';
import { routeReads } from './read-pool.js';
import { trackInFlightHandlers } from './in-flight.js';
import { validatorCompiler } from '../web/validation.js';
import { opsRoutes, type OpsDeps } from './routes/ops.js';
import { runRoutes } from './routes/runs.js';
import { vehicleRoutes } from './routes/vehicles.js';
import { webhookSubscriptionRoutes } from './routes/webhook-subscriptions.js';
import { monitoringSubscriptionRoutes } from './routes/monitoring-subscriptions.js';
import { monitoringDeliveryActionRoutes } from './routes/monitoring-delivery-actions.js';
import { geofenceRoutes } from './routes/geofences.js';
import { historyReportRoutes, type HistoryPdfRenderer } from './routes/history-report.js';
import { instantVerifyRoutes } from './routes/instant-verify.js';
import { usageRoutes } from './routes/usage.js';
import { auditEventRoutes } from './routes/audit-events.js';
import { companyAdminRoutes } from './routes/admin/companies.js';
import { vehicleAdminRoutes } from './routes/admin/vehicles.js';
import { serviceRequestAdminRoutes } from './routes/admin/service-requests.js';
import { runAdminRoutes } from './routes/admin/runs.js';
import { providerConnectionAdminRoutes } from './routes/admin/provider-connections.js';
import { healthAdminRoutes } from './routes/admin/health.js';
import { rosterAdminRoutes } from './routes/admin/roster.js';
import { inboxAdminRoutes } from './routes/admin/inbox.js';
import { userAdminRoutes } from './routes/admin/users.js';
import { queueBoardRoutes } from './routes/admin/queue-board.js';
import { statusAdminRoutes } from './routes/admin/status.js';
import { ingestRoutes } from './routes/ingest.js';
import { consolePlugin } from '../console/plugin.js';

export interface AppDeps {
  config: Config;
  pool: Pool;
  /** Used for the per-key rate limit and readiness; requests fail open if it is down. */
  redis: RedisConnection;
  log: Logger;
  metrics: Metrics;
  /** Producers for the jobs the API starts (ingest after a push, refreshes, pull schedules). */
  queues: Queues;
  migrationIds: readonly string[];
  /**
   * Threads for CPU-heavy requests (dry runs, report PDFs). The service passes its own and closes
   * it on shutdown; without one the app makes its own and closes it with itself (tests).
   */
  cpuPool?: CpuPool;
  /** Readiness checks beyond the API's own (workers in the same process: `schedules`). */
  readiness?: OpsDeps['readiness'];
  now?: () => Date;
  /** The history report's PDF stream; the CPU pool's renderer by default (tests inject a failing one). */
  renderHistoryPdf?: HistoryPdfRenderer;
}

/** Fastify takes a hop count as a function of the hop (its types do not list the number form). */
function trustProxy(setting: Config['trustProxy']): boolean | string[] | ((address: string, hop: number) => boolean) {
  return typeof setting === 'number' ? (_address, hop) => hop < setting : setting;
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const now = deps.now ?? (() => new Date());
  const app = Fastify({
    loggerInstance: deps.log as FastifyBaseLogger,
    bodyLimit: deps.config.bodyLimitBytes,
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    // Per-request lines cost throughput; failures are logged by the error handler instead.
    logController: new LogController({ disableRequestLogging: true }),
    return503OnClosing: true,
    trustProxy: trustProxy(deps.config.trustProxy),
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  let cpuPool = deps.cpuPool;
  if (!cpuPool) {
    const own = (cpuPool = new CpuPool(deps.config, deps.log));
    app.addHook('onClose', () => own.close());
  }
  installErrorHandlers(app);
  installJsonBodies(app);
  trackInFlightHandlers(app);
  await app.register(sensible);

  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
    // No page of ours may be framed (clickjacking): the API docs and the queue board. The
    // console's own hook runs after this one and replaces the CSP with its fuller policy.
    if (String(reply.getHeader('content-type')).startsWith('text/html')) {
      reply.header('x-frame-options', 'DENY');
      reply.header('content-security-policy', "frame-ancestors 'none'");
    }
  });
  app.addHook('onResponse', async (request, reply) => {
    deps.metrics.httpDuration.observe(
      { method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });

  // API_ROLE (docs/scaling.md "Process roles"): an ingest process keeps only the push routes and
  // the probes, so its event loop and memory hold nothing of the read side; a read process leaves
  // the push routes unregistered, and a push to it answers the usual 404 envelope.
  const role = deps.config.apiRole;
  if (role !== 'ingest') await registerOpenApi(app, { operatorApi: Boolean(deps.config.adminToken) });

  await app.register(opsRoutes, {
    pool: deps.pool,
    redis: deps.redis,
    metrics: deps.metrics,
    migrationIds: deps.migrationIds,
    metricsToken: deps.config.metricsToken,
    ...(deps.readiness ? { readiness: deps.readiness } : {}),
  });

  // Pushes and the operator API's connection routes share it: a changed secret reaches both.
  const connections = new ConnectionCache(deps.pool, deps.config.secretsKey);
  if (role !== 'ingest') await registerReadSurface(app, deps, { now, cpuPool, connections });
  if (role !== 'read') {
    await app.register(ingestRoutes, {
      prefix: '/ingest/v1',
      pool: deps.pool,
      queues: deps.queues,
      connections,
      metrics: deps.metrics,
      log: deps.log,
      bodyLimitBytes: deps.config.ingestBodyLimitBytes,
      redis: deps.redis,
      redisPrefix: deps.config.redisPrefix,
      rateLimitPerMinute: deps.config.ingestRateLimitPerMinute,
    });
  }

  return app;
}

/**
 * Everything but the provider pushes: the public API under /api/v1 and /v1, the console and the
 * operator API, with what they share (key cache, rate limiter, request log, read routing).
 */
async function registerReadSurface(
  app: FastifyInstance,
  deps: AppDeps,
  shared: { now: () => Date; cpuPool: CpuPool; connections: ConnectionCache },
): Promise<void> {
  const { now, cpuPool, connections } = shared;
  const subscriber = deps.redis.duplicate();
  subscriber.on('error', () => {});
  const keyCache = new ApiKeyCache(subscriber, `${deps.config.redisPrefix}:api-key-revoked`, deps.log);
  await keyCache.start();
  app.addHook('onClose', async () => {
    subscriber.disconnect();
  });

  const vehicleCache = new VehicleJsonCache(deps.config.vehicleCacheEntries);
  // Both public bases share one authentication (one failed-auth count per address) and one rate
  // limit budget per key: the limit's counter is keyed by the key alone, so /api/v1 and /v1 draw on it together.
  const authenticate = apiKeyAuthentication(deps.pool, keyCache, deps.log);
  const rateLimiter = new KeyRateLimiter(
    deps.redis,
    deps.config.redisPrefix,
    deps.config.rateLimitPerMinute,
    deps.log,
    () => now().getTime(),
  );
  app.addHook('onClose', () => rateLimiter.close());
  // The console's Requests page: one row per authenticated request, written in batches off the
  // request path and flushed when the app closes (before the service ends the pool).
  const requestLog = new RequestLogRecorder(deps.pool, deps.log, deps.metrics.requestLogDropped);
  app.addHook('onClose', () => requestLog.close());
  // DATABASE_REPLICA_URLS: the public API's reads go to replicas that have the key's writes.
  const reads = new ReadRouter({
    config: deps.config,
    primary: deps.pool,
    redis: deps.redis,
    log: deps.log,
    metrics: deps.metrics,
  });
  await reads.start();
  app.addHook('onClose', () => reads.close());
  const publicApi = async (api: FastifyInstance) => {
    api.addHook('onRequest', authenticate);
    api.addHook('onResponse', async (request, reply) => {
      // Refused before a key was known (401, or 429 for failed authentications): no company to show it to.
      if (request.principal === undefined) return;
      requestLog.record(requestLogRow(request, reply));
    });
    api.addHook('preHandler', async (request, reply) => {
      const decision = rateLimiter.take(request.principal.keyId);
      reply.header('x-ratelimit-limit', decision.limit);
      reply.header('x-ratelimit-remaining', decision.remaining);
      reply.header('x-ratelimit-reset', decision.resetSeconds);
      if (!decision.allowed) throw rateLimited(decision.resetSeconds);
    });
    routeReads(api, reads, deps.pool);
    // Not the per-key limit (above): the store of the routes' own limits (Send test), in Redis.
    await api.register(rateLimit, {
      global: false,
      redis: deps.redis,
      nameSpace: `${deps.config.redisPrefix}:ratelimit:`,
      skipOnError: true,
      errorResponseBuilder: (_request, context) => rateLimited(context.ttl / 1000),
    });
  };

  await app.register(
    async (api) => {
      await publicApi(api);
      await api.register(runRoutes);
      await api.register(vehicleRoutes, { pool: deps.pool, queues: deps.queues, now, vehicleCache });
      await api.register(webhookSubscriptionRoutes, { pool: deps.pool, queues: deps.queues, config: deps.config, now });
    },
    { prefix: '/api/v1' },
  );

  await app.register(
    async (v1) => {
      await publicApi(v1);
      await v1.register(monitoringSubscriptionRoutes, { pool: deps.pool, config: deps.config, cpuPool, now });
      await v1.register(monitoringDeliveryActionRoutes, {
        pool: deps.pool,
        queues: deps.queues,
        log: deps.log,
        now,
        config: deps.config,
      });
      await v1.register(geofenceRoutes, { pool: deps.pool, config: deps.config });
      await v1.register(historyReportRoutes, {
        pool: deps.pool,
        log: deps.log,
        cpuPool,
        now,
        renderPdf: deps.renderHistoryPdf,
      });
      await v1.register(instantVerifyRoutes, { pool: deps.pool, log: deps.log, now });
      await v1.register(usageRoutes, { now });
      await v1.register(auditEventRoutes);
    },
    { prefix: '/v1' },
  );

  // The developer console (docs/console.md): its own sessions, CSP and error pages, in its own scope.
  await app.register(consolePlugin, {
    config: deps.config,
    pool: deps.pool,
    redis: deps.redis,
    queues: deps.queues,
    keyCache,
    log: deps.log,
    metrics: deps.metrics,
    now,
  });

  const adminToken = deps.config.adminToken;
  if (adminToken) {
    await app.register(
      async (admin) => {
        admin.addHook('onRequest', adminAuthentication(adminToken));
        await admin.register(companyAdminRoutes, { pool: deps.pool, config: deps.config, redis: deps.redis, keyCache });
        await admin.register(vehicleAdminRoutes, { pool: deps.pool, queues: deps.queues, now });
        await admin.register(serviceRequestAdminRoutes, { pool: deps.pool, queues: deps.queues });
        await admin.register(runAdminRoutes, { pool: deps.pool, queues: deps.queues, now });
        await admin.register(providerConnectionAdminRoutes, {
          pool: deps.pool,
          queues: deps.queues,
          connections,
          secretsKey: deps.config.secretsKey,
          allowNets: deps.config.webhookAllowNets,
        });
        await admin.register(healthAdminRoutes, { pool: deps.pool, queues: deps.queues });
        await admin.register(rosterAdminRoutes, { pool: deps.pool });
        await admin.register(inboxAdminRoutes, { pool: deps.pool });
        await admin.register(userAdminRoutes, { pool: deps.pool });
        await admin.register(statusAdminRoutes, { pool: deps.pool, queues: deps.queues, reads, now });
      },
      { prefix: '/admin/v1' },
    );
    await app.register(queueBoardRoutes, { queues: deps.queues, adminToken });
  }
}
