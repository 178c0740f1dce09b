/**
 * Monitoring subscriptions of the caller's company (docs/monitoring.md), under /v1: subscribe
 * (the signing secret is returned once), list, get with endpoint health, delete, the deliveries
 * with their attempts, and the dry run over stored history. Manual retry and recover are the
 * delivery pipeline's routes (docs/monitoring.md).
 */
import { apiKeyActor } from '../../audit/record.js';
import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import type { Config } from '../../config.js';
import type { CpuPool } from '../../cpu-pool/pool.js';
import {
  countMonitoringDeliveries,
  listMonitoringDeliveries,
  loadEndpointHealth,
} from '../../db/monitoring-deliveries.js';
import { countMonitoringSubscriptions, listMonitoringSubscriptions } from '../../db/monitoring-subscriptions.js';
import type { Pool } from '../../db/pool.js';
import { dryRunMaxDays, dryRunMonitoringSubscription } from '../../dry-run/monitoring-dry-run.js';
import { canonicalKind } from '../../domain/monitoring-kinds.js';
import {
  removeMonitoringSubscription,
  requireMonitoringSubscription,
  subscribeToMonitoring,
} from '../../monitoring/subscription-actions.js';
import {
  presentEndpointHealth,
  presentMonitoringDelivery,
  presentMonitoringSubscription,
} from '../../presenters/monitoring.js';
import { Envelope, ErrorEnvelope, PathId, authErrorResponses, ok } from '../../web/schemas.js';
import {
  CreatedMonitoringSubscription,
  DeliveryListQuery,
  DryRunBody,
  DryRunResult,
  MonitoringDelivery,
  MonitoringSubscription,
  MonitoringSubscriptionWithHealth,
  SubscribeBody,
  SubscriptionListQuery,
} from '../schemas/monitoring.js';

const security = [{ bearerAuth: [] }];
const tags = ['Monitoring'];

const SubscriptionParams = Type.Object({ subscription_id: PathId });

/** The success envelope around `data` serialized elsewhere (a CPU-pool thread): what Fastify sends for `ok(data)`. */
function okJson(data: Buffer): Buffer {
  const [before, after] = JSON.stringify(ok(null)).split('"data":null');
  return Buffer.concat([Buffer.from(`${before}"data":`), data, Buffer.from(after!)]);
}

export const monitoringSubscriptionRoutes: FastifyPluginAsyncTypebox<{
  pool: Pool;
  config: Config;
  cpuPool: CpuPool;
  now: () => Date;
}> = async (app, deps) => {
  app.post(
    '/runs/subscribe',
    {
      schema: {
        tags,
        operationId: 'createMonitoringSubscription',
        summary: 'Subscribe a vehicle to monitoring events; the signing secret is returned once',
        description:
          'The tier (default standard) must cover every kind asked for. 404 for a vehicle that is not an active ' +
          'vehicle of the company; 409 LIMIT_REACHED past MONITORING_SUBSCRIPTIONS_PER_COMPANY.',
        security,
        body: SubscribeBody,
        response: {
          201: Envelope(CreatedMonitoringSubscription),
          400: ErrorEnvelope,
          404: ErrorEnvelope,
          409: ErrorEnvelope,
          ...authErrorResponses,
        },
      },
    },
    async (request, reply) => {
      const { body } = request;
      const { subscription, signingSecret } = await subscribeToMonitoring(
        deps,
        request.principal.companyId,
        apiKeyActor(request.principal),
        {
          vehicleId: body.vehicle_id,
          webhookUrl: body.webhook_url,
          events: body.events,
          tier: body.tier ?? 'standard',
          options: body.options,
        },
      );
      return reply
        .code(201)
        .send(ok({ ...presentMonitoringSubscription(subscription), signing_secret: signingSecret }));
    },
  );

  app.get(
    '/subscriptions',
    {
      schema: {
        tags,
        operationId: 'listMonitoringSubscriptions',
        summary: 'List monitoring subscriptions, newest first',
        security,
        querystring: SubscriptionListQuery,
        response: { 200: Envelope(Type.Array(MonitoringSubscription)), 400: ErrorEnvelope, ...authErrorResponses },
      },
    },
    async (request) => {
      const { query } = request;
      const { companyId } = request.principal;
      const filter = { deleted: query.status === 'deleted', vehicleId: query.vehicle_id ?? null };
      const [subscriptions, total] = await Promise.all([
        listMonitoringSubscriptions(request.readPool, companyId, filter, query.limit, query.offset),
        countMonitoringSubscriptions(request.readPool, companyId, filter),
      ]);
      return ok(subscriptions.map(presentMonitoringSubscription), { limit: query.limit, offset: query.offset, total });
    },
  );

  app.get(
    '/subscriptions/:subscription_id',
    {
      schema: {
        tags,
        operationId: 'getMonitoringSubscription',
        summary: 'Get a monitoring subscription with its endpoint health (never its secret)',
        security,
        params: SubscriptionParams,
        response: { 200: Envelope(MonitoringSubscriptionWithHealth), 404: ErrorEnvelope, ...authErrorResponses },
      },
    },
    async (request) => {
      const pool = request.readPool;
      const subscription = await requireMonitoringSubscription(
        pool,
        request.principal.companyId,
        request.params.subscription_id,
      );
      const health = await loadEndpointHealth(pool, subscription.id, deps.now());
      return ok({ ...presentMonitoringSubscription(subscription), endpoint_health: presentEndpointHealth(health) });
    },
  );

  app.delete(
    '/subscriptions/:subscription_id',
    {
      schema: {
        tags,
        operationId: 'deleteMonitoringSubscription',
        summary: 'Delete a monitoring subscription: detection stops; it stays readable with status deleted',
        description:
          'Deliveries still owed are not sent (the pipeline settles them as failed). 404 for one already deleted.',
        security,
        params: SubscriptionParams,
        response: { 200: Envelope(MonitoringSubscription), 404: ErrorEnvelope, ...authErrorResponses },
      },
    },
    async (request) => {
      const { companyId } = request.principal;
      return ok(
        presentMonitoringSubscription(
          await removeMonitoringSubscription(
            deps.pool,
            companyId,
            apiKeyActor(request.principal),
            request.params.subscription_id,
          ),
        ),
      );
    },
  );

  app.get(
    '/subscriptions/:subscription_id/deliveries',
    {
      schema: {
        tags,
        operationId: 'listMonitoringDeliveries',
        summary: 'Deliveries of this subscription, newest first, each with its attempt timeline',
        security,
        params: SubscriptionParams,
        querystring: DeliveryListQuery,
        response: {
          200: Envelope(Type.Array(MonitoringDelivery)),
          400: ErrorEnvelope,
          404: ErrorEnvelope,
          ...authErrorResponses,
        },
      },
    },
    async (request) => {
      const { companyId } = request.principal;
      const pool = request.readPool;
      const subscription = await requireMonitoringSubscription(pool, companyId, request.params.subscription_id);
      const { query } = request;
      const filter = {
        status: query.status ?? null,
        event: query.event ? canonicalKind(query.event) : null,
        since: query.since ? new Date(query.since) : null,
      };
      const [deliveries, total] = await Promise.all([
        listMonitoringDeliveries(pool, companyId, subscription.id, filter, query.limit, query.offset),
        countMonitoringDeliveries(pool, companyId, subscription.id, filter),
      ]);
      return ok(deliveries.map(presentMonitoringDelivery), { limit: query.limit, offset: query.offset, total });
    },
  );

  app.post(
    '/subscriptions/:subscription_id/dry-run',
    {
      schema: {
        tags,
        operationId: 'dryRunMonitoringSubscription',
        summary: 'The events this subscription would have sent from the stored readings since a time',
        description:
          `Replays the vehicle's readings and provider events from \`since\` (at most ${dryRunMaxDays} days back) until ` +
          'now through the same detectors, from a fresh state. Nothing is stored or delivered. 400 when the window ' +
          'holds more than MONITORING_DRY_RUN_MAX_READINGS readings; 422 WORK_BUDGET_EXCEEDED when the replay needs ' +
          'more than MONITORING_DRY_RUN_MAX_FENCE_TESTS geofence tests or CPU_TASK_BUDGET_MS of computation ' +
          '(details.limit names which); 503 when the CPU pool is full.',
        security,
        params: SubscriptionParams,
        body: DryRunBody,
        response: {
          200: Envelope(DryRunResult),
          400: ErrorEnvelope,
          404: ErrorEnvelope,
          422: ErrorEnvelope,
          503: ErrorEnvelope,
          ...authErrorResponses,
        },
      },
    },
    async (request, reply) => {
      const data = await dryRunMonitoringSubscription(
        deps,
        request.principal.companyId,
        request.params.subscription_id,
        new Date(request.body.since),
      );
      // A Buffer is sent as it is: the JSON was made on the thread, in the response schema's shape.
      return (reply as FastifyReply).type('application/json; charset=utf-8').send(okJson(data));
    },
  );
};
