/**
 * Webhook subscriptions of the caller's company (DESIGN §4, an extension of spec/000): create
 * (the signing secret is returned once), list, get, delete, Send test, and delivery attempts.
 */
import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Config } from '../../config.js';
import { findCompany } from '../../db/companies.js';
import type { Pool } from '../../db/pool.js';
import {
  countDeliveries,
  countSubscriptions,
  deleteSubscription,
  findSubscription,
  insertSubscription,
  insertWebhookEvents,
  listDeliveries,
  listSubscriptions,
  type SubscriptionRecord,
} from '../../db/webhooks.js';
import { runEventKinds } from '../../domain/run.js';
import { invalidRequest, notFound, rateLimited, type FieldError } from '../../errors.js';
import type { Queues } from '../../queue/queues.js';
import { encryptSecret, newSecret } from '../../security/secrets.js';
import { requestRelay } from '../../webhooks/queue.js';
import { targetUrlProblem } from '../../webhooks/ssrf.js';
import { syntheticWebhookRun } from '../../webhooks/webhook-run.js';
import { createWithinCap, type CompanyCap } from '../company-caps.js';
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
  isRecordId,
  ok,
} from '../schemas/common.js';
import { enqueueAfterCommit } from '../../queue/after-commit.js';

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
  attempts: Type.Array(Attempt),
});

const SubscriptionParams = Type.Object({ subscription_id: PathId });

function present(s: SubscriptionRecord) {
  return { id: s.id, url: s.url, events: s.events, created_at: s.createdAt.toISOString() };
}

/** Registration-time checks; the delivery client checks the resolved address again at connect time. */
function urlProblems(raw: string, allowNets: readonly string[]): FieldError[] {
  const problem = targetUrlProblem(raw, allowNets);
  return problem ? [{ field: 'url', message: problem }] : [];
}

const createErrors = { 400: ErrorEnvelope, 409: ErrorEnvelope, ...authErrorResponses };

export const webhookSubscriptionRoutes: FastifyPluginAsyncTypebox<{
  pool: Pool;
  queues: Queues;
  config: Config;
  now: () => Date;
}> = async (app, deps) => {
  const cap: CompanyCap = {
    resource: 'webhook subscriptions',
    limit: deps.config.webhookSubscriptionsPerCompany,
    count: countSubscriptions,
  };
  // Shared by every API process through Redis; if Redis is down the test is sent (fail open).
  const sendTestLimit = app.createRateLimit({
    max: deps.config.webhookTestsPerMinute,
    timeWindow: 60_000,
    keyGenerator: (request) => `send-test:${request.principal.companyId}`,
  });

  async function requireSubscription(companyId: string, id: string): Promise<SubscriptionRecord> {
    const subscription = isRecordId(id) ? await findSubscription(deps.pool, companyId, id) : null;
    if (!subscription) throw notFound('webhook subscription');
    return subscription;
  }

  app.post(
    '/webhook-subscriptions',
    {
      schema: {
        tags: ['Webhooks'],
        summary: 'Subscribe an HTTPS URL to run events; the signing secret is returned once',
        description: `409 LIMIT_REACHED when the company already has WEBHOOK_SUBSCRIPTIONS_PER_COMPANY subscriptions.`,
        security,
        body: SubscriptionBody,
        response: { 201: Envelope(CreatedSubscription), ...createErrors },
      },
    },
    async (request, reply) => {
      const { body } = request;
      const problems = urlProblems(body.url, deps.config.webhookAllowNets);
      if (problems.length > 0) throw invalidRequest(problems);
      const { companyId } = request.principal;
      const secret = newSecret('whsec_');
      const subscription = await createWithinCap(deps.pool, cap, companyId, (tx) =>
        insertSubscription(tx, {
          companyId,
          url: body.url,
          events: body.events,
          secretCiphertext: encryptSecret(deps.config.secretsKey, secret),
        }),
      );
      return reply.code(201).send(ok({ ...present(subscription), signing_secret: secret }));
    },
  );

  app.get(
    '/webhook-subscriptions',
    {
      schema: {
        tags: ['Webhooks'],
        summary: 'List webhook subscriptions',
        security,
        response: { 200: Envelope(Type.Array(Subscription)), ...authErrorResponses },
      },
    },
    async (request) => ok((await listSubscriptions(deps.pool, request.principal.companyId)).map(present)),
  );

  app.get(
    '/webhook-subscriptions/:subscription_id',
    {
      schema: {
        tags: ['Webhooks'],
        summary: 'Get a webhook subscription (never its secret)',
        security,
        params: SubscriptionParams,
        response: { 200: Envelope(Subscription), 404: ErrorEnvelope, ...authErrorResponses },
      },
    },
    async (request) =>
      ok(present(await requireSubscription(request.principal.companyId, request.params.subscription_id))),
  );

  app.delete(
    '/webhook-subscriptions/:subscription_id',
    {
      schema: {
        tags: ['Webhooks'],
        summary: 'Delete a webhook subscription; it receives nothing more',
        security,
        params: SubscriptionParams,
        response: { 200: Envelope(Subscription), 404: ErrorEnvelope, ...authErrorResponses },
      },
    },
    async (request) => {
      const id = request.params.subscription_id;
      const deleted = isRecordId(id) ? await deleteSubscription(deps.pool, request.principal.companyId, id) : null;
      if (!deleted) throw notFound('webhook subscription');
      return ok(present(deleted));
    },
  );

  app.post(
    '/webhook-subscriptions/:subscription_id/test',
    {
      schema: {
        tags: ['Webhooks'],
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
      const company = (await findCompany(deps.pool, companyId))!;
      const [event] = await insertWebhookEvents(deps.pool, [
        {
          companyId,
          runId: null,
          kind: 'webhook.test',
          payload: syntheticWebhookRun(company, deps.now()),
          subscriptionId: subscription.id,
        },
      ]);
      await enqueueAfterCommit(request.log, 'webhooks.relay', () => requestRelay(deps.queues));
      return reply.code(202).send(ok({ event_id: event!.id, status: 'queued' }));
    },
  );

  app.get(
    '/webhook-subscriptions/:subscription_id/deliveries',
    {
      schema: {
        tags: ['Webhooks'],
        summary: 'Deliveries to this subscription, newest first, with every attempt',
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
      const subscription = await requireSubscription(companyId, request.params.subscription_id);
      const { limit, offset } = request.query;
      const [deliveries, total] = await Promise.all([
        listDeliveries(deps.pool, companyId, subscription.id, limit, offset),
        countDeliveries(deps.pool, companyId, subscription.id),
      ]);
      const data = deliveries.map((d) => ({
        id: d.id,
        event_id: d.eventId,
        event: d.event,
        status: d.status,
        created_at: d.createdAt.toISOString(),
        completed_at: d.completedAt?.toISOString() ?? null,
        attempts: d.attempts.map((a) => ({ ...a, started_at: new Date(a.started_at).toISOString() })),
      }));
      return ok(data, { limit, offset, total });
    },
  );
};
