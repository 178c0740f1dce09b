/**
 * Monitoring delivery actions of the caller's company (docs/monitoring.md), under /v1: one more attempt of
 * a delivery now, and recover (resend a subscription's failed deliveries since a time). Both
 * answer 202: the attempts are queued and their outcomes appear in the deliveries list. Another
 * company's id answers 404. The logic is src/monitoring/delivery-actions.ts, shared with the console.
 */
import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Config } from '../../config.js';
import type { Pool } from '../../db/pool.js';
import { notFound } from '../../errors.js';
import type { Logger } from '../../log.js';
import { recoverMonitoringDeliveries, retryMonitoringDelivery } from '../../monitoring/delivery-actions.js';
import type { Queues } from '../../queue/queues.js';
import { Envelope, ErrorEnvelope, PathId, authErrorResponses, ok } from '../../web/schemas.js';
import { RecoverAccepted, RecoverBody, RetryAccepted } from '../schemas/monitoring.js';

const security = [{ bearerAuth: [] }];
const tags = ['Monitoring'];

export const monitoringDeliveryActionRoutes: FastifyPluginAsyncTypebox<{
  pool: Pool;
  queues: Queues;
  log: Pick<Logger, 'warn'>;
  now: () => Date;
  config: Pick<Config, 'monitoringManualRetriesPerHour' | 'monitoringManualRetriesPerDelivery'>;
}> = async (app, deps) => {
  app.post(
    '/deliveries/:delivery_id/retry',
    {
      schema: {
        tags,
        operationId: 'retryMonitoringDelivery',
        summary: 'Send one more attempt of a monitoring delivery now',
        description:
          'The attempt is recorded with trigger manual and does not use up the retry schedule; a 2xx marks the ' +
          'delivery succeeded. Any status may be retried. A delivery gets at most MONITORING_MANUAL_RETRIES_PER_HOUR ' +
          'manual retries in any rolling hour (then 429 RATE_LIMITED with Retry-After) and ' +
          'MONITORING_MANUAL_RETRIES_PER_DELIVERY in all (then 409 LIMIT_REACHED).',
        security,
        params: Type.Object({ delivery_id: PathId }),
        response: { 202: Envelope(RetryAccepted), 404: ErrorEnvelope, 409: ErrorEnvelope, ...authErrorResponses },
      },
    },
    async (request, reply) => {
      const accepted = await retryMonitoringDelivery(deps, request.principal.companyId, request.params.delivery_id);
      if (!accepted) throw notFound('monitoring delivery');
      return reply.code(202).send(ok({ delivery_id: accepted.deliveryId, queued: accepted.queued }));
    },
  );

  app.post(
    '/subscriptions/:subscription_id/recover',
    {
      schema: {
        tags,
        operationId: 'recoverMonitoringDeliveries',
        summary: "Resend a subscription's failed deliveries since a time",
        description:
          'Each failed delivery created at or after since (and inside the retention window) gets one more attempt ' +
          'now, with trigger recover, counted as a manual retry of it; a delivery with no manual retry left is ' +
          'skipped. Answers how many were queued; a deleted subscription queues none.',
        security,
        params: Type.Object({ subscription_id: PathId }),
        body: RecoverBody,
        response: { 202: Envelope(RecoverAccepted), 404: ErrorEnvelope, ...authErrorResponses, 400: ErrorEnvelope },
      },
    },
    async (request, reply) => {
      const { companyId } = request.principal;
      const since = new Date(request.body.since);
      const accepted = await recoverMonitoringDeliveries(deps, companyId, request.params.subscription_id, since);
      if (!accepted) throw notFound('monitoring subscription');
      return reply.code(202).send(
        ok({
          subscription_id: accepted.subscriptionId,
          since: accepted.since.toISOString(),
          queued: accepted.queued,
        }),
      );
    },
  );
};
