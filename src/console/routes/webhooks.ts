/** Webhooks (docs/webhooks.md): subscribe an endpoint to run events, the secret once, Send test, deliveries live. */
import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import { isRecordId } from '../../api/schemas/common.js';
import { createWebhookSubscription, sendWebhookTest } from '../../api/webhook-subscription-actions.js';
import { findSubscription, listDeliveries, listSubscriptions, type SubscriptionRecord } from '../../db/webhooks.js';
import { runEventKinds } from '../../domain/run.js';
import { AppError, notFound, rateLimited } from '../../errors.js';
import { flashUrl, putFlash, takeFlash } from '../flash.js';
import type { ConsoleDeps } from '../plugin.js';
import { viewer } from '../viewer.js';
import { webhookDeliveries, webhooksPage, type WebhooksView } from '../views/webhooks.js';
import { Checkboxes, Form, IdParams } from './forms.js';

const CreateForm = Form({
  url: Type.String({ maxLength: 2048 }),
  events: Checkboxes(50, runEventKinds.length),
});
const TestForm = Form({});

/** Deliveries shown per subscription (the API pages through all of them). */
const deliveriesShown = 20;

export const webhookPages: FastifyPluginAsyncTypebox<ConsoleDeps> = async (app, deps) => {
  // The same Redis counter as the API's Send test (same namespace and key): one budget per company.
  await app.register(rateLimit, {
    global: false,
    redis: deps.redis,
    nameSpace: `${deps.config.redisPrefix}:ratelimit:`,
    skipOnError: true,
  });
  const sendTestLimit = app.createRateLimit({
    max: deps.config.webhookTestsPerMinute,
    timeWindow: 60_000,
    keyGenerator: (request) => `send-test:${request.consoleSession.companyId}`,
  });

  async function requireSubscription(request: FastifyRequest, id: string): Promise<SubscriptionRecord> {
    const found = isRecordId(id) ? await findSubscription(deps.pool, request.consoleSession.companyId, id) : null;
    if (!found) throw notFound('webhook subscription');
    return found;
  }

  async function render(request: FastifyRequest, view: Omit<WebhooksView, 'subscriptions' | 'kinds'>) {
    const { companyId } = request.consoleSession;
    const subscriptions = await listSubscriptions(deps.pool, companyId);
    const withDeliveries = await Promise.all(
      subscriptions.map(async (subscription) => ({
        subscription,
        deliveries: await listDeliveries(deps.pool, companyId, subscription.id, deliveriesShown, 0),
      })),
    );
    return webhooksPage(viewer(request), { ...view, subscriptions: withDeliveries, kinds: runEventKinds });
  }

  const emptyDraft = { url: '', events: [] };

  app.get(
    '/console/webhooks',
    {
      schema: {
        hide: true,
        querystring: Type.Object({
          tested: Type.Optional(Type.String({ maxLength: 2048 })),
          created: Type.Optional(Type.String({ maxLength: 100 })),
        }),
      },
    },
    async (request, reply) => {
      const { tested, created: flashId } = request.query;
      const created = flashId ? await takeFlash(deps, request, 'webhooks', flashId) : null;
      let notice: string | null = null;
      if (created) notice = `Subscribed ${created.url}.`;
      else if (flashId) notice = 'The signing secret was shown once and is not shown again.';
      else if (tested) notice = `Test event queued for ${tested}; it appears under Deliveries in a moment.`;
      return reply
        .type('text/html; charset=utf-8')
        .send(await render(request, { draft: emptyDraft, created, notice, error: null }));
    },
  );

  // A valid form answers 303 to the list, which shows the secret once (src/console/flash.ts); a
  // refused one is shown again with its alert and creates nothing.
  app.post('/console/webhooks', { schema: { hide: true, body: CreateForm } }, async (request, reply) => {
    const url = request.body.url.trim();
    const events = [request.body.events ?? []].flat();
    const draft = { url, events };
    const unknown = events.filter((e) => !(runEventKinds as readonly string[]).includes(e));
    let error: string | null = null;
    let status = 400;
    if (events.length === 0) error = 'Choose at least one event kind.';
    else if (unknown.length > 0) error = `Unknown event kinds: ${unknown.join(', ')}.`;
    if (error === null) {
      try {
        const { companyId, id: sessionId } = request.consoleSession;
        let flashId = '';
        await createWebhookSubscription(deps, companyId, url, events, async (tx, created) => {
          const message = { url: created.subscription.url, signingSecret: created.signingSecret };
          flashId = await putFlash(tx, deps.config.secretsKey, sessionId, 'webhooks', message);
        });
        return reply.redirect(flashUrl('webhooks', flashId), 303);
      } catch (failure) {
        if (!(failure instanceof AppError) || failure.status >= 500) throw failure;
        error = `Not created: ${failure.message}.`;
        status = failure.status;
      }
    }
    return reply
      .code(status)
      .type('text/html; charset=utf-8')
      .send(await render(request, { draft, created: null, notice: null, error }));
  });

  app.post(
    '/console/webhooks/:id/test',
    { schema: { hide: true, params: IdParams, body: TestForm } },
    async (request, reply) => {
      const subscription = await requireSubscription(request, request.params.id);
      const limit = await sendTestLimit(request);
      if (!limit.isAllowed && limit.isExceeded) {
        throw rateLimited(
          limit.ttl / 1000,
          `at most ${limit.max} Send test calls per minute per company; try again shortly`,
        );
      }
      await sendWebhookTest(deps, request.log, subscription);
      return reply.redirect(`/console/webhooks?tested=${encodeURIComponent(subscription.url)}`, 303);
    },
  );

  app.get(
    '/console/webhooks/:id/deliveries',
    { schema: { hide: true, params: IdParams }, config: { consoleData: true } },
    async (request, reply) => {
      const subscription = await requireSubscription(request, request.params.id);
      const deliveries = await listDeliveries(
        deps.pool,
        request.consoleSession.companyId,
        subscription.id,
        deliveriesShown,
        0,
      );
      return reply.type('text/html; charset=utf-8').send(webhookDeliveries(deliveries).text);
    },
  );
};
