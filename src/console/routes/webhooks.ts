/** Webhooks (docs/webhooks.md): subscribe an endpoint to run events, the secret once, Send test, deliveries live. */
import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import {
  createWebhookSubscription,
  removeWebhookSubscription,
  requireWebhookSubscription,
  sendWebhookTest,
} from '../../webhooks/subscription-actions.js';
import { listDeliveriesPage, listSubscriptionsPage } from '../../db/webhooks.js';
import { runEventKinds } from '../../domain/run.js';
import { exactTimeCursor, parseExactTimeCursor, readPage, type PageRequest } from '../../domain/keyset-page.js';
import { AppError } from '../../errors.js';
import { asRefusal, flashUrl, putFlash, redirectRefused, takeFlash } from '../flash.js';
import type { ConsoleDeps } from '../deps.js';
import { viewer } from '../viewer.js';
import { deleteConfirmPage } from '../views/delete-confirm.js';
import {
  webhookDeleteConsequence,
  webhookDeliveries,
  webhookSubscriptionPage,
  webhooksPage,
  type WebhooksView,
} from '../views/webhooks.js';
import { userActor } from '../../audit/record.js';
import { Checkboxes, Form, IdParams } from './forms.js';
import { PageFields, pageRequestOf } from './paging.js';

const CreateForm = Form({
  url: Type.String({ maxLength: 2048 }),
  events: Checkboxes(50, runEventKinds.length),
});
const TestForm = Form({});
const DeleteForm = Form({});

/** Subscriptions per page. */
const subscriptionsShown = 20;
/** The newest deliveries a subscription's card shows; its own page has them all. */
const deliveriesPreviewed = 5;
/** Deliveries per page of a subscription's own page. */
const deliveriesShown = 20;
const firstPreview: PageRequest = { direction: 'next', cursor: null, limit: deliveriesPreviewed };

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

  const requireSubscription = (request: FastifyRequest, id: string) =>
    requireWebhookSubscription(deps.pool, request.consoleSession.companyId, id);

  const deliveriesPage = (companyId: string, subscriptionId: string, request: PageRequest) =>
    readPage(
      request,
      (direction, cursor, limit) => {
        const position = parseExactTimeCursor(cursor);
        return listDeliveriesPage(deps.pool, companyId, subscriptionId, position ? direction : 'next', position, limit);
      },
      (d) => exactTimeCursor(d.cursorAt, d.id),
    );

  async function render(
    request: FastifyRequest,
    pageQuery: { next?: string; previous?: string },
    view: Omit<WebhooksView, 'subscriptions' | 'page' | 'kinds'>,
  ) {
    const { companyId } = request.consoleSession;
    const page = await readPage(
      pageRequestOf(pageQuery, subscriptionsShown),
      (direction, cursor, limit) => {
        const position = parseExactTimeCursor(cursor);
        return listSubscriptionsPage(deps.pool, companyId, position ? direction : 'next', position, limit);
      },
      (s) => exactTimeCursor(s.cursorAt, s.id),
    );
    const withDeliveries = await Promise.all(
      page.rows.map(async (subscription) => ({
        subscription,
        deliveries: (await deliveriesPage(companyId, subscription.id, firstPreview)).rows,
      })),
    );
    return webhooksPage(viewer(request), { ...view, subscriptions: withDeliveries, page, kinds: runEventKinds });
  }

  app.get(
    '/console/webhooks',
    {
      schema: {
        hide: true,
        querystring: Type.Object({
          ...PageFields,
          tested: Type.Optional(Type.String({ maxLength: 2048 })),
          created: Type.Optional(Type.String({ maxLength: 100 })),
          refused: Type.Optional(Type.String({ maxLength: 100 })),
          deleted: Type.Optional(Type.String({ maxLength: 2048 })),
        }),
      },
    },
    async (request, reply) => {
      const { tested, created: createdId, refused: refusedId, deleted } = request.query;
      const created = await takeFlash(deps, request, 'created', 'webhooks', createdId);
      const refused = await takeFlash(deps, request, 'refused', 'webhooks', refusedId);
      let notice: string | null = null;
      if (created) notice = `Subscribed ${created.url}.`;
      else if (createdId) notice = 'The signing secret was shown once and is not shown again.';
      else if (tested) notice = `Test event queued for ${tested}; it appears under Deliveries in a moment.`;
      else if (deleted) notice = `Deleted the subscription of ${deleted}. It receives nothing more.`;
      const draft = refused?.draft ?? { url: '', events: [] };
      return reply
        .type('text/html; charset=utf-8')
        .send(await render(request, request.query, { draft, created, notice, error: refused?.error ?? null }));
    },
  );

  // Answers 303 to the list, which shows the secret once, or the refusal once with the form as
  // typed (src/console/flash.ts): a reload creates nothing, even once there is room again.
  app.post('/console/webhooks', { schema: { hide: true, body: CreateForm } }, async (request, reply) => {
    const url = request.body.url.trim();
    const events = [request.body.events ?? []].flat();
    const refuse = (error: string) =>
      redirectRefused(deps, request, reply, 'webhooks', { error, draft: { url, events } });
    const unknown = events.filter((e) => !(runEventKinds as readonly string[]).includes(e));
    if (events.length === 0) return refuse('Choose at least one event kind.');
    if (unknown.length > 0) return refuse(`Unknown event kinds: ${unknown.join(', ')}.`);
    const { companyId, id: sessionId } = request.consoleSession;
    let flashId = '';
    const actor = userActor(request.consoleSession);
    const outcome = await createWebhookSubscription(deps, companyId, actor, url, events, async (tx, created) => {
      const message = { url: created.subscription.url, signingSecret: created.signingSecret };
      flashId = await putFlash(tx, deps.config.secretsKey, sessionId, 'created', 'webhooks', message);
    }).catch(asRefusal);
    if (outcome instanceof AppError) return refuse(`Not created: ${outcome.message}.`);
    return reply.redirect(flashUrl('created', 'webhooks', flashId), 303);
  });

  // Over the company's Send test budget: 303 back with the refusal, so a reload sends nothing later.
  app.post(
    '/console/webhooks/:id/test',
    { schema: { hide: true, params: IdParams, body: TestForm } },
    async (request, reply) => {
      const subscription = await requireSubscription(request, request.params.id);
      const limit = await sendTestLimit(request);
      if (!limit.isAllowed && limit.isExceeded) {
        const seconds = Math.max(1, Math.ceil(limit.ttl / 1000));
        return redirectRefused(deps, request, reply, 'webhooks', {
          error: `Not sent: at most ${limit.max} Send test calls per minute per company; try again in ${seconds} seconds.`,
          draft: null,
        });
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
      const deliveries = await deliveriesPage(request.consoleSession.companyId, subscription.id, firstPreview);
      return reply.type('text/html; charset=utf-8').send(webhookDeliveries(deliveries.rows).text);
    },
  );

  app.get(
    '/console/webhooks/:id',
    { schema: { hide: true, params: IdParams, querystring: Type.Object(PageFields) } },
    async (request, reply) => {
      const subscription = await requireSubscription(request, request.params.id);
      const { companyId } = request.consoleSession;
      const deliveries = await deliveriesPage(
        companyId,
        subscription.id,
        pageRequestOf(request.query, deliveriesShown),
      );
      return reply
        .type('text/html; charset=utf-8')
        .send(webhookSubscriptionPage(viewer(request), subscription, deliveries));
    },
  );

  app.get('/console/webhooks/:id/delete', { schema: { hide: true, params: IdParams } }, async (request, reply) => {
    const subscription = await requireSubscription(request, request.params.id);
    return reply.type('text/html; charset=utf-8').send(
      deleteConfirmPage(viewer(request), {
        section: 'webhooks',
        title: 'Delete webhook subscription',
        consequence: webhookDeleteConsequence(subscription),
        action: `/console/webhooks/${subscription.id}/delete`,
        cancel: '/console/webhooks',
      }),
    );
  });

  // The public API's DELETE /api/v1/webhook-subscriptions/:id: the same action, audited as the user.
  app.post(
    '/console/webhooks/:id/delete',
    { schema: { hide: true, params: IdParams, body: DeleteForm } },
    async (request, reply) => {
      const session = request.consoleSession;
      const deleted = await removeWebhookSubscription(
        deps.pool,
        session.companyId,
        userActor(session),
        request.params.id,
      );
      return reply.redirect(`/console/webhooks?deleted=${encodeURIComponent(deleted.url)}`, 303);
    },
  );
};
