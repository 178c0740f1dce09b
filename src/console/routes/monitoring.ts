/** Monitoring (docs/monitoring.md): subscriptions with their deliveries, a status filter, endpoint health, Retry. */
import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { StringEnum } from '../../web/schemas.js';
import {
  listMonitoringDeliveriesPage,
  loadEndpointHealth,
  monitoringDeliveryStatuses,
  type MonitoringDeliveryStatus,
} from '../../db/monitoring-deliveries.js';
import { listLiveMonitoringSubscriptionsPage } from '../../db/monitoring-subscriptions.js';
import { listVehicleLabels } from '../../db/vehicles.js';
import { AppError, notFound } from '../../errors.js';
import { retryMonitoringDelivery } from '../../monitoring/delivery-actions.js';
import { removeMonitoringSubscription, requireMonitoringSubscription } from '../../monitoring/subscription-actions.js';
import { userActor } from '../../audit/record.js';
import { isRecordId } from '../../domain/ids.js';
import {
  exactTimeCursor,
  parseExactTimeCursor,
  parseTimeCursor,
  readPage,
  timeCursor,
  type PageRequest,
} from '../../domain/keyset-page.js';
import { deleteConfirmPage } from '../views/delete-confirm.js';
import { PageFields, pageRequestOf } from './paging.js';
import { asRefusal, putFlash, takeFlash } from '../flash.js';
import type { ConsoleDeps } from '../deps.js';
import { viewer } from '../viewer.js';
import {
  monitoringDeleteConsequence,
  monitoringDeliveries,
  monitoringPage,
  monitoringSubscriptionPage,
} from '../views/monitoring.js';
import { Form, IdParams } from './forms.js';

const StatusField = Type.Optional(Type.Union([StringEnum(monitoringDeliveryStatuses), Type.Literal('')]));

const StatusQuery = Type.Object({
  ...PageFields,
  status: StatusField,
  retried: Type.Optional(Type.String({ maxLength: 100 })),
  deleted: Type.Optional(Type.String({ maxLength: 2048 })),
  refused: Type.Optional(Type.String({ maxLength: 100 })),
});

/** From a subscription's own page, its id and filter, so the answer goes back there. */
const RetryForm = Form({ subscription: Type.Optional(Type.String({ maxLength: 100 })), status: StatusField });
const DeleteForm = Form({});

/** Subscriptions per page. */
const subscriptionsShown = 20;
/** The newest deliveries a subscription's card shows; its own page has them all. */
const deliveriesPreviewed = 5;
/** Deliveries per page of a subscription's own page. */
const deliveriesShown = 20;
const firstPreview: PageRequest = { direction: 'next', cursor: null, limit: deliveriesPreviewed };

function statusFilter(status: string | undefined): MonitoringDeliveryStatus | null {
  return status ? (status as MonitoringDeliveryStatus) : null;
}

const retriedNotice = 'Retry sent: the attempt appears under the delivery.';

/** The page a Retry answers with: the subscription's own page it was pressed on (same filter), else the list. */
function afterRetry(form: { subscription?: string; status?: string }, outcome: string): string {
  const path =
    form.subscription && isRecordId(form.subscription)
      ? `/console/monitoring/${form.subscription}`
      : '/console/monitoring';
  return `${path}?${form.subscription && form.status ? `status=${form.status}&` : ''}${outcome}`;
}

export const monitoringPages: FastifyPluginAsyncTypebox<ConsoleDeps> = async (app, deps) => {
  const deliveriesPage = (
    companyId: string,
    subscriptionId: string,
    status: MonitoringDeliveryStatus | null,
    request: PageRequest,
  ) =>
    readPage(
      request,
      (direction, cursor, limit) => {
        const position = parseExactTimeCursor(cursor);
        const from = position ? direction : 'next';
        return listMonitoringDeliveriesPage(deps.pool, companyId, subscriptionId, status, from, position, limit);
      },
      (d) => exactTimeCursor(d.cursorAt, d.id),
    );

  /** The company's live subscription with its vehicle's name; 404 for another company's or a deleted one. */
  async function requireLiveSubscription(request: FastifyRequest, id: string) {
    const { companyId } = request.consoleSession;
    const subscription = await requireMonitoringSubscription(deps.pool, companyId, id);
    if (subscription.deletedAt) throw notFound('monitoring subscription');
    const names = await listVehicleLabels(deps.pool, companyId, [subscription.vehicleId]);
    return { subscription, vehicleName: names.get(subscription.vehicleId) ?? subscription.vehicleId };
  }

  async function render(
    request: FastifyRequest,
    pageQuery: { next?: string; previous?: string },
    status: MonitoringDeliveryStatus | null,
    notice: string | null,
    error: string | null,
  ) {
    const { companyId } = request.consoleSession;
    const page = await readPage(
      pageRequestOf(pageQuery, subscriptionsShown),
      (direction, cursor, limit) => {
        const at = parseTimeCursor(cursor);
        const position = at && isRecordId(at.id) ? { createdAt: at.at, id: at.id } : null;
        return listLiveMonitoringSubscriptionsPage(
          deps.pool,
          companyId,
          position ? direction : 'next',
          position,
          limit,
        );
      },
      (s) => timeCursor(s.createdAt, s.id),
    );
    const subscriptions = page.rows;
    const names = await listVehicleLabels(deps.pool, companyId, [...new Set(subscriptions.map((s) => s.vehicleId))]);
    const entries = await Promise.all(
      subscriptions.map(async (subscription) => ({
        subscription,
        vehicleName: names.get(subscription.vehicleId) ?? subscription.vehicleId,
        deliveries: (await deliveriesPage(companyId, subscription.id, status, firstPreview)).rows,
        health: await loadEndpointHealth(deps.pool, subscription.id, deps.now()),
      })),
    );
    return monitoringPage(viewer(request), {
      subscriptions: entries,
      page,
      statuses: monitoringDeliveryStatuses,
      status,
      notice,
      error,
    });
  }

  app.get('/console/monitoring', { schema: { hide: true, querystring: StatusQuery } }, async (request, reply) => {
    const { retried, deleted } = request.query;
    let notice: string | null = null;
    if (retried) notice = retriedNotice;
    else if (deleted) notice = `Deleted the subscription of ${deleted}. It receives nothing more.`;
    const refused = await takeFlash(deps, request, 'refused', 'monitoring', request.query.refused);
    return reply
      .type('text/html; charset=utf-8')
      .send(await render(request, request.query, statusFilter(request.query.status), notice, refused?.error ?? null));
  });

  app.get(
    '/console/monitoring/:id/deliveries',
    { schema: { hide: true, params: IdParams, querystring: StatusQuery }, config: { consoleData: true } },
    async (request, reply) => {
      const { companyId, csrfToken } = request.consoleSession;
      const { id } = request.params;
      const subscription = await requireMonitoringSubscription(deps.pool, companyId, id);
      const status = statusFilter(request.query.status);
      const deliveries = await deliveriesPage(companyId, subscription.id, status, firstPreview);
      return reply.type('text/html; charset=utf-8').send(monitoringDeliveries(csrfToken, deliveries.rows, status).text);
    },
  );

  app.get(
    '/console/monitoring/:id',
    { schema: { hide: true, params: IdParams, querystring: StatusQuery } },
    async (request, reply) => {
      const { subscription, vehicleName } = await requireLiveSubscription(request, request.params.id);
      const status = statusFilter(request.query.status);
      const pageRequest = pageRequestOf(request.query, deliveriesShown);
      const { companyId } = request.consoleSession;
      const deliveries = await deliveriesPage(companyId, subscription.id, status, pageRequest);
      const refused = await takeFlash(deps, request, 'refused', 'monitoring', request.query.refused);
      return reply.type('text/html; charset=utf-8').send(
        monitoringSubscriptionPage(viewer(request), {
          subscription,
          vehicleName,
          deliveries,
          statuses: monitoringDeliveryStatuses,
          status,
          notice: request.query.retried ? retriedNotice : null,
          error: refused?.error ?? null,
        }),
      );
    },
  );

  // The public API's retry (POST /v1/deliveries/:id/retry): one more attempt now, trigger manual.
  // Past the delivery's limits, 303 back with the refusal: a reload retries nothing later.
  app.post(
    '/console/monitoring/deliveries/:id/retry',
    { schema: { hide: true, params: IdParams, body: RetryForm } },
    async (request, reply) => {
      const { id } = request.params;
      const accepted = await retryMonitoringDelivery(
        { ...deps, log: request.log },
        request.consoleSession.companyId,
        id,
      ).catch(asRefusal);
      if (accepted instanceof AppError) {
        const refusal = { error: `Not retried: ${accepted.message}.`, draft: null };
        const { id: sessionId } = request.consoleSession;
        const flashId = await putFlash(deps.pool, deps.config.secretsKey, sessionId, 'refused', 'monitoring', refusal);
        return reply.redirect(afterRetry(request.body, `refused=${flashId}`), 303);
      }
      if (!accepted) throw notFound('monitoring delivery');
      return reply.redirect(afterRetry(request.body, `retried=${accepted.deliveryId}`), 303);
    },
  );

  app.get('/console/monitoring/:id/delete', { schema: { hide: true, params: IdParams } }, async (request, reply) => {
    const { subscription, vehicleName } = await requireLiveSubscription(request, request.params.id);
    return reply.type('text/html; charset=utf-8').send(
      deleteConfirmPage(viewer(request), {
        section: 'monitoring',
        title: 'Delete monitoring subscription',
        consequence: monitoringDeleteConsequence(vehicleName, subscription),
        action: `/console/monitoring/${subscription.id}/delete`,
        cancel: '/console/monitoring',
      }),
    );
  });

  // The public API's DELETE /v1/subscriptions/:id: the same action, audited as the user.
  app.post(
    '/console/monitoring/:id/delete',
    { schema: { hide: true, params: IdParams, body: DeleteForm } },
    async (request, reply) => {
      const session = request.consoleSession;
      const deleted = await removeMonitoringSubscription(
        deps.pool,
        session.companyId,
        userActor(session),
        request.params.id,
      );
      return reply.redirect(`/console/monitoring?deleted=${encodeURIComponent(deleted.webhookUrl)}`, 303);
    },
  );
};
