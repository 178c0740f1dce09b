/** Monitoring (docs/monitoring.md): subscriptions with their deliveries, a status filter, endpoint health, Retry. */
import Type from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { StringEnum } from '../../web/schemas.js';
import {
  listMonitoringDeliveries,
  loadEndpointHealth,
  monitoringDeliveryStatuses,
  type MonitoringDeliveryStatus,
} from '../../db/monitoring-deliveries.js';
import { listMonitoringSubscriptions } from '../../db/monitoring-subscriptions.js';
import { listVehicleLabels } from '../../db/vehicles.js';
import { AppError, notFound } from '../../errors.js';
import { retryMonitoringDelivery } from '../../monitoring/delivery-actions.js';
import { requireMonitoringSubscription } from '../../monitoring/subscription-actions.js';
import { asRefusal, redirectRefused, takeFlash } from '../flash.js';
import type { ConsoleDeps } from '../deps.js';
import { viewer } from '../viewer.js';
import { monitoringDeliveries, monitoringPage } from '../views/monitoring.js';
import { Form, IdParams } from './forms.js';

const StatusQuery = Type.Object({
  status: Type.Optional(Type.Union([StringEnum(monitoringDeliveryStatuses), Type.Literal('')])),
  retried: Type.Optional(Type.String({ maxLength: 100 })),
  refused: Type.Optional(Type.String({ maxLength: 100 })),
});

const RetryForm = Form({});

const subscriptionsShown = 100;
const deliveriesShown = 20;

function statusFilter(status: string | undefined): MonitoringDeliveryStatus | null {
  return status ? (status as MonitoringDeliveryStatus) : null;
}

export const monitoringPages: FastifyPluginAsyncTypebox<ConsoleDeps> = async (app, deps) => {
  async function deliveriesOf(companyId: string, subscriptionId: string, status: MonitoringDeliveryStatus | null) {
    return listMonitoringDeliveries(
      deps.pool,
      companyId,
      subscriptionId,
      { status, event: null, since: null },
      deliveriesShown,
      0,
    );
  }

  async function render(
    request: FastifyRequest,
    status: MonitoringDeliveryStatus | null,
    notice: string | null,
    error: string | null,
  ) {
    const { companyId } = request.consoleSession;
    const subscriptions = await listMonitoringSubscriptions(
      deps.pool,
      companyId,
      { deleted: false, vehicleId: null },
      subscriptionsShown,
      0,
    );
    const names = await listVehicleLabels(deps.pool, companyId, [...new Set(subscriptions.map((s) => s.vehicleId))]);
    const entries = await Promise.all(
      subscriptions.map(async (subscription) => ({
        subscription,
        vehicleName: names.get(subscription.vehicleId) ?? subscription.vehicleId,
        deliveries: await deliveriesOf(companyId, subscription.id, status),
        health: await loadEndpointHealth(deps.pool, subscription.id, deps.now()),
      })),
    );
    return monitoringPage(viewer(request), {
      subscriptions: entries,
      statuses: monitoringDeliveryStatuses,
      status,
      notice,
      error,
    });
  }

  app.get('/console/monitoring', { schema: { hide: true, querystring: StatusQuery } }, async (request, reply) => {
    const notice = request.query.retried ? 'Retry sent: the attempt appears under the delivery.' : null;
    const refused = await takeFlash(deps, request, 'refused', 'monitoring', request.query.refused);
    return reply
      .type('text/html; charset=utf-8')
      .send(await render(request, statusFilter(request.query.status), notice, refused?.error ?? null));
  });

  app.get(
    '/console/monitoring/:id/deliveries',
    { schema: { hide: true, params: IdParams, querystring: StatusQuery }, config: { consoleData: true } },
    async (request, reply) => {
      const { companyId, csrfToken } = request.consoleSession;
      const { id } = request.params;
      const subscription = await requireMonitoringSubscription(deps.pool, companyId, id);
      const status = statusFilter(request.query.status);
      const deliveries = await deliveriesOf(companyId, subscription.id, status);
      return reply.type('text/html; charset=utf-8').send(monitoringDeliveries(csrfToken, deliveries, status).text);
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
        const error = `Not retried: ${accepted.message}.`;
        return redirectRefused(deps, request, reply, 'monitoring', { error, draft: null });
      }
      if (!accepted) throw notFound('monitoring delivery');
      return reply.redirect(`/console/monitoring?retried=${accepted.deliveryId}`, 303);
    },
  );
};
