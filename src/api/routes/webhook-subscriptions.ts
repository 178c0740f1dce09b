/**
 * Webhook subscriptions of the caller's company (DESIGN §4, an extension of spec/000): create
 * (the signing secret is returned once), list, get, delete, Send test, and delivery attempts.
 */
import { isIP } from 'node:net';
import Type from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config.js';
import { findCompany } from '../../db/companies.js';
import type { Pool } from '../../db/pool.js';
import {
  countDeliveries, deleteSubscription, findSubscription, insertSubscription, insertWebhookEvents, listDeliveries, listSubscriptions,
  type SubscriptionRecord,
} from '../../db/webhooks.js';
import { runEventKinds } from '../../domain/run.js';
import { invalidRequest, notFound, type FieldError } from '../../errors.js';
import type { Queues } from '../../queue/queues.js';
import { encryptSecret, newSecret } from '../../security/secrets.js';
import { requestRelay } from '../../webhooks/queue.js';
import { allowsPlainHttp, blockedReason } from '../../webhooks/ssrf.js';
import { syntheticWebhookRun } from '../../webhooks/webhook-run.js';
import { Envelope, ErrorEnvelope, Nullable, PageQuery, PathId, StringEnum, Timestamp, authErrorResponses, isRecordId, meta } from '../schemas/common.js';

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
    url: Type.String({ minLength: 1, maxLength: 2048, description: 'HTTPS URL (http only to WEBHOOK_ALLOW_NETS).' }),
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
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return [{ field: 'url', message: 'is not a valid URL' }];
  }
  if (url.username || url.password) return [{ field: 'url', message: 'must not contain credentials' }];
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && allowsPlainHttp(url, allowNets))) {
    return [{ field: 'url', message: 'must be https' }];
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0) {
    const reason = blockedReason(host, allowNets);
    if (reason) return [{ field: 'url', message: `points at a ${reason} address` }];
  }
  if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.internal')) return [{ field: 'url', message: 'points at a local host name' }];
  return [];
}

export async function webhookSubscriptionRoutes(app: FastifyInstance, deps: { pool: Pool; queues: Queues; config: Config; now: () => Date }): Promise<void> {
  async function requireSubscription(companyId: string, id: string): Promise<SubscriptionRecord> {
    const subscription = isRecordId(id) ? await findSubscription(deps.pool, companyId, id) : null;
    if (!subscription) throw notFound('webhook subscription');
    return subscription;
  }

  app.post('/webhook-subscriptions', {
    schema: {
      tags: ['Webhooks'],
      summary: 'Subscribe an HTTPS URL to run events; the signing secret is returned once',
      security,
      body: SubscriptionBody,
      response: { 201: Envelope(CreatedSubscription), 400: ErrorEnvelope, ...authErrorResponses },
    },
  }, async (request, reply) => {
    const body = request.body as Type.Static<typeof SubscriptionBody>;
    const problems = urlProblems(body.url, deps.config.webhookAllowNets);
    if (problems.length > 0) throw invalidRequest(problems);
    const secret = newSecret('whsec_');
    const subscription = await insertSubscription(deps.pool, {
      companyId: request.principal.companyId, url: body.url, events: body.events, secretCiphertext: encryptSecret(deps.config.secretsKey, secret),
    });
    return reply.code(201).send({ success: true, data: { ...present(subscription), signing_secret: secret }, meta: meta(null) });
  });

  app.get('/webhook-subscriptions', {
    schema: { tags: ['Webhooks'], summary: 'List webhook subscriptions', security, response: { 200: Envelope(Type.Array(Subscription)), ...authErrorResponses } },
  }, async (request) => {
    const subscriptions = await listSubscriptions(deps.pool, request.principal.companyId);
    return { success: true, data: subscriptions.map(present), meta: meta(null) };
  });

  app.get('/webhook-subscriptions/:subscription_id', {
    schema: { tags: ['Webhooks'], summary: 'Get a webhook subscription (never its secret)', security, params: SubscriptionParams, response: { 200: Envelope(Subscription), 404: ErrorEnvelope, ...authErrorResponses } },
  }, async (request) => {
    const subscription = await requireSubscription(request.principal.companyId, (request.params as { subscription_id: string }).subscription_id);
    return { success: true, data: present(subscription), meta: meta(null) };
  });

  app.delete('/webhook-subscriptions/:subscription_id', {
    schema: { tags: ['Webhooks'], summary: 'Delete a webhook subscription; it receives nothing more', security, params: SubscriptionParams, response: { 200: Envelope(Subscription), 404: ErrorEnvelope, ...authErrorResponses } },
  }, async (request) => {
    const id = (request.params as { subscription_id: string }).subscription_id;
    const deleted = isRecordId(id) ? await deleteSubscription(deps.pool, request.principal.companyId, id) : null;
    if (!deleted) throw notFound('webhook subscription');
    return { success: true, data: present(deleted), meta: meta(null) };
  });

  app.post('/webhook-subscriptions/:subscription_id/test', {
    schema: {
      tags: ['Webhooks'],
      summary: 'Send test: delivers webhook.test, a fully synthetic run, to this subscription',
      security, params: SubscriptionParams,
      response: { 202: Envelope(Type.Object({ event_id: Type.String(), status: Type.String() })), 404: ErrorEnvelope, ...authErrorResponses },
    },
  }, async (request, reply) => {
    const { companyId } = request.principal;
    const subscription = await requireSubscription(companyId, (request.params as { subscription_id: string }).subscription_id);
    const company = (await findCompany(deps.pool, companyId))!;
    const [event] = await insertWebhookEvents(deps.pool, [
      { companyId, runId: null, kind: 'webhook.test', payload: syntheticWebhookRun(company, deps.now()), subscriptionId: subscription.id },
    ]);
    await requestRelay(deps.queues).catch((err: unknown) => request.log.warn({ err: (err as Error).message }, 'relay not queued; the scheduled relay will send it'));
    return reply.code(202).send({ success: true, data: { event_id: event!.id, status: 'queued' }, meta: meta(null) });
  });

  const DeliveryQuery = Type.Object({ limit: PageQuery.limit, offset: PageQuery.offset }, { additionalProperties: false });
  app.get('/webhook-subscriptions/:subscription_id/deliveries', {
    schema: {
      tags: ['Webhooks'],
      summary: 'Deliveries to this subscription, newest first, with every attempt',
      security, params: SubscriptionParams, querystring: DeliveryQuery,
      response: { 200: Envelope(Type.Array(Delivery)), 400: ErrorEnvelope, 404: ErrorEnvelope, ...authErrorResponses },
    },
  }, async (request) => {
    const { companyId } = request.principal;
    const subscription = await requireSubscription(companyId, (request.params as { subscription_id: string }).subscription_id);
    const { limit, offset } = request.query as Type.Static<typeof DeliveryQuery>;
    const [deliveries, total] = await Promise.all([
      listDeliveries(deps.pool, companyId, subscription.id, limit, offset),
      countDeliveries(deps.pool, companyId, subscription.id),
    ]);
    const data = deliveries.map((d) => ({
      id: d.id, event_id: d.eventId, event: d.event, status: d.status, created_at: d.createdAt.toISOString(),
      completed_at: d.completedAt?.toISOString() ?? null,
      attempts: d.attempts.map((a) => ({ ...a, started_at: new Date(a.started_at).toISOString() })),
    }));
    return { success: true, data, meta: meta({ limit, offset, total }) };
  });
}
