/**
 * Webhook subscriptions of the caller's company (docs/webhooks.md "Subscriptions API"): create
 * (the signing secret is returned once), list, get, delete, Send test, and delivery attempts.
 */
import { apiKeyActor } from '../../audit/record.js';
import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Config } from '../../config.js';
import type { Pool } from '../../db/pool.js';
import { attemptsListed } from '../../db/monitoring-deliveries.js';
import { countDeliveries, listDeliveries, listSubscriptions } from '../../db/webhooks.js';
import { runEventKinds } from '../../domain/run.js';
import { rateLimited } from '../../errors.js';
import type { Queues } from '../../queue/queues.js';
import {
  createWebhookSubscription,
  removeWebhookSubscription,
  requireWebhookSubscription,
  sendWebhookTest,
} from '../../webhooks/subscription-actions.js';
import { presentWebhookDelivery, presentWebhookSubscription } from '../../presenters/webhook-subscription.js';
import {
  Envelope,
  ErrorEnvelope,
  Nullable,
  PageOnlyQuery,
  PathId,
  StringEnum,
  Text,
  Timestamp,
  authErrorResponses,
  ok,
} from '../../web/schemas.js';

const security = [{ bearerAuth: [] }];

const Subscription = Type.Object({
  id: Type.String(),
  url: Type.String(),
  events: Type.Array(Type.String()),
  created_at: Timestamp,
});

const CreatedSubscription = Type.Object({
  ...Subscription.properties,
  signing_secret: Type.String({ description: 'Signs Service-Signature. Shown once: store it now.' }),
});

const SubscriptionBody = Type.Object(
  {
    url: Text('url', { minLength: 1, description: 'HTTPS URL (http only to WEBHOOK_ALLOW_NETS).' }),
    events: Type.Array(StringEnum(runEventKinds), { minItems: 1, maxItems: runEventKinds.length, uniqueItems: true }),
  },
  { additionalProperties: false },
);

const Attempt = Type.Object({
  attempt_number: Type.Integer(),
  trigger: Type.String(),
  started_at: Timestamp,
  duration_ms: Type.Integer(),
  response_status: Nullable(Type.Integer()),
  response_excerpt: Nullable(Type.String()),
  response_truncated: Type.Boolean(),
  error_code: Nullable(Type.String()),
  error_message: Nullable(Type.String()),
});

const Delivery = Type.Object({
  id: Type.String(),
  event_id: Type.String(),
  event: Type.String(),
  status: Type.String({ description: 'pending, sending, succeeded or failed' }),
  created_at: Timestamp,
  completed_at: Nullable(Timestamp),
  attempts: Type.Array(Attempt, {
    description: `The newest ${attemptsListed} attempts, oldest first (a core delivery has one attempt).`,
  }),
  attempt_count: Type.Integer({ description: 'Every attempt made, those not listed included.' }),
});

const SubscriptionParams = Type.Object({ subscription_id: PathId });

const createErrors = { 400: ErrorEnvelope, 409: ErrorEnvelope, ...authErrorResponses };

export const webhookSubscriptionRoutes: FastifyPluginAsyncTypebox<{
  pool: Pool;
  queues: Queues;
  config: Config;
  now: () => Date;
}> = async (app, deps) => {
  // Shared by every API process through Redis; if Redis is down the test is sent (fail open).
  const sendTestLimit = app.createRateLimit({
    max: deps.config.webhookTestsPerMinute,
    timeWindow: 60_000,
    keyGenerator: (request) => `send-test:${request.principal.companyId}`,
  });

  const requireSubscription = (companyId: string, id: string) => requireWebhookSubscription(deps.pool, companyId, id);

  app.post(
    '/webhook-subscriptions',
    {
      schema: {
        tags: ['Webhooks'],
        operationId: 'createWebhookSubscription',
        summary: 'Subscribe an HTTPS URL to run events; the signing secret is returned once',
        description: `409 LIMIT_REACHED when the company already has WEBHOOK_SUBSCRIPTIONS_PER_COMPANY subscriptions.`,
        security,
        body: SubscriptionBody,
        response: { 201: Envelope(CreatedSubscription), ...createErrors },
      },
    },
    async (request, reply) => {
      const { body } = request;
      const { subscription, signingSecret } = await createWebhookSubscription(
        deps,
        request.principal.companyId,
        apiKeyActor(request.principal),
        body.url,
        body.events,
      );
      return reply.code(201).send(ok({ ...presentWebhookSubscription(subscription), signing_secret: signingSecret }));
    },
  );

  app.get(
    '/webhook-subscriptions',
    {
      schema: {
        tags: ['Webhooks'],
        operationId: 'listWebhookSubscriptions',
        summary: 'List webhook subscriptions',
        security,
        response: { 200: Envelope(Type.Array(Subscription)), ...authErrorResponses },
      },
    },
    async (request) =>
      ok((await listSubscriptions(request.readPool, request.principal.companyId)).map(presentWebhookSubscription)),
  );

  app.get(
    '/webhook-subscriptions/:subscription_id',
    {
      schema: {
        tags: ['Webhooks'],
        operationId: 'getWebhookSubscription',
        summary: 'Get a webhook subscription (never its secret)',
        security,
        params: SubscriptionParams,
        response: { 200: Envelope(Subscription), 404: ErrorEnvelope, ...authErrorResponses },
      },
    },
    async (request) =>
      ok(
        presentWebhookSubscription(
          await requireWebhookSubscription(
            request.readPool,
            request.principal.companyId,
            request.params.subscription_id,
          ),
        ),
      ),
  );

  app.delete(
    '/webhook-subscriptions/:subscription_id',
    {
      schema: {
        tags: ['Webhooks'],
        operationId: 'deleteWebhookSubscription',
        summary: 'Delete a webhook subscription; it receives nothing more',
        security,
        params: SubscriptionParams,
        response: { 200: Envelope(Subscription), 404: ErrorEnvelope, ...authErrorResponses },
      },
    },
    async (request) => {
      const { companyId } = request.principal;
      const actor = apiKeyActor(request.principal);
      const deleted = await removeWebhookSubscription(deps.pool, companyId, actor, request.params.subscription_id);
      return ok(presentWebhookSubscription(deleted));
    },
  );

  app.post(
    '/webhook-subscriptions/:subscription_id/test',
    {
      schema: {
        tags: ['Webhooks'],
        operationId: 'testWebhookSubscription',
        summary: 'Send test: delivers webhook.test, a fully synthetic run, to this subscription',
        description: 'At most WEBHOOK_TESTS_PER_MINUTE per company; more answer 429 RATE_LIMITED with Retry-After.',
        security,
        params: SubscriptionParams,
        response: {
          202: Envelope(Type.Object({ event_id: Type.String(), status: Type.String() })),
          404: ErrorEnvelope,
          ...authErrorResponses,
        },
      },
    },
    async (request, reply) => {
      const { companyId } = request.principal;
      const subscription = await requireSubscription(companyId, request.params.subscription_id);
      const limit = await sendTestLimit(request);
      if (!limit.isAllowed && limit.isExceeded) {
        throw rateLimited(limit.ttl / 1000, `at most ${limit.max} Send test calls per minute per company`);
      }
      const eventId = await sendWebhookTest(deps, request.log, subscription);
      return reply.code(202).send(ok({ event_id: eventId, status: 'queued' }));
    },
  );

  app.get(
    '/webhook-subscriptions/:subscription_id/deliveries',
    {
      schema: {
        tags: ['Webhooks'],
        operationId: 'listWebhookDeliveries',
        summary: 'Deliveries to this subscription, newest first, with their attempts',
        security,
        params: SubscriptionParams,
        querystring: PageOnlyQuery,
        response: {
          200: Envelope(Type.Array(Delivery)),
          400: ErrorEnvelope,
          404: ErrorEnvelope,
          ...authErrorResponses,
        },
      },
    },
    async (request) => {
      const { companyId } = request.principal;
      const pool = request.readPool;
      const subscription = await requireWebhookSubscription(pool, companyId, request.params.subscription_id);
      const { limit, offset } = request.query;
      const [deliveries, total] = await Promise.all([
        listDeliveries(pool, companyId, subscription.id, limit, offset),
        countDeliveries(pool, companyId, subscription.id),
      ]);
      return ok(deliveries.map(presentWebhookDelivery), { limit, offset, total });
    },
  );
};
