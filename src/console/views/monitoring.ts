import {
  endpointHealthWindow,
  type EndpointHealthRecord,
  type MonitoringDeliveryRecord,
  type MonitoringDeliveryStatus,
} from '../../db/monitoring-deliveries.js';
import type { MonitoringSubscriptionRecord } from '../../db/monitoring-subscriptions.js';
import { html, type Html } from '../html.js';
import { time } from './format.js';
import { allDeliveriesLink, deliveryTable } from './delivery-table.js';
import { deleteButton, deleteDialog } from './delete-confirm.js';
import { alertBox, csrfField, noticeBox, page, pager, type Viewer } from './layout.js';

export interface MonitoringView {
  subscriptions: Array<{
    subscription: MonitoringSubscriptionRecord;
    vehicleName: string;
    deliveries: MonitoringDeliveryRecord[];
    health: EndpointHealthRecord;
  }>;
  /** Cursors of the subscriptions' pages (newest first). */
  page: { next: string | null; previous: string | null };
  statuses: readonly MonitoringDeliveryStatus[];
  status: MonitoringDeliveryStatus | null;
  notice: string | null;
  error: string | null;
}

function lastAttempt(delivery: MonitoringDeliveryRecord): string {
  const last = delivery.attempts.at(-1);
  if (!last) return 'not attempted yet';
  return last.statusCode !== null ? `HTTP ${last.statusCode} in ${last.durationMs} ms` : (last.error ?? 'error');
}

/**
 * One subscription's deliveries: the page's and the live region's markup. On the subscription's
 * own page (`subscriptionPage`, its id), Retry comes back to that page by the same filter.
 */
export function monitoringDeliveries(
  csrfToken: string,
  deliveries: MonitoringDeliveryRecord[],
  status: MonitoringDeliveryStatus | null,
  subscriptionPage: string | null = null,
): Html {
  return deliveryTable({
    rows: deliveries.map((d) => ({ ...d, lastResponse: lastAttempt(d) })),
    empty: status
      ? `No ${status} deliveries. Choose "All" to see every delivery.`
      : 'No deliveries yet: events are sent when the vehicle reports one of the subscribed kinds.',
    nextAttempt: (d) => d.nextAttemptAt,
    action: (d) =>
      d.status === 'failed'
        ? html`<form method="post" action="/console/monitoring/deliveries/${d.id}/retry" class="inline">
            ${csrfField(csrfToken)}
            ${subscriptionPage ? html`<input type="hidden" name="subscription" value="${subscriptionPage}" />` : ''}
            ${subscriptionPage && status ? html`<input type="hidden" name="status" value="${status}" />` : ''}
            <button type="submit">Retry</button>
          </form>`
        : null,
  });
}

function endpointHealth(health: EndpointHealthRecord): Html {
  const window = `in the last ${endpointHealthWindow.hours} hours`;
  if (health.attempts === 0) return html`<p>Endpoint health: no attempts ${window}.</p>`;
  const rate = Math.round((health.successes / health.attempts) * 100);
  return html`<p>
    Endpoint health: ${rate} % of the last ${health.attempts} attempts succeeded, ${window}; last success
    ${time(health.lastSuccessAt, 'none')}${
      health.lastFailure
        ? html`; last failure ${time(health.lastFailure.at)}
          (${health.lastFailure.statusCode !== null ? `HTTP ${health.lastFailure.statusCode}` : health.lastFailure.error})`
        : ''
    }.
  </p>`;
}

/** The status filter of a deliveries list: a GET form, so the filtered list has its own URL. */
function statusFilter(
  action: string,
  statuses: readonly MonitoringDeliveryStatus[],
  status: MonitoringDeliveryStatus | null,
): Html {
  return html`<form method="get" action="${action}" class="inline">
    <label for="status">Status</label>
    <select id="status" name="status">
      <option value="" ${status === null ? html`selected` : ''}>All</option>
      ${statuses.map((s) => html`<option value="${s}" ${status === s ? html`selected` : ''}>${s}</option>`)}
    </select>
    <button type="submit">Filter</button>
  </form>`;
}

export function monitoringDeleteConsequence(vehicleName: string, s: MonitoringSubscriptionRecord): string {
  return `Monitoring of ${vehicleName} stops and ${s.webhookUrl} receives nothing more from the moment you delete it; deliveries still owed are not sent. This cannot be undone.`;
}

export function monitoringPage(viewer: Viewer, view: MonitoringView): string {
  const query = view.status ? `?status=${view.status}` : '';
  const body = html`${alertBox(view.error)}
  ${view.notice ? html`<p class="notice" role="status">${view.notice}</p>` : ''}
  ${statusFilter('/console/monitoring', view.statuses, view.status)}
  ${
    view.subscriptions.length === 0
      ? html`<p class="empty">
          No monitoring subscriptions yet. Subscribe a vehicle with <code>POST /v1/runs/subscribe</code> (an API key
          from the API keys page); its deliveries appear here.
        </p>`
      : view.subscriptions.map(
          ({ subscription: s, vehicleName, deliveries, health }) =>
            html`<section class="card" aria-labelledby="mon-${s.id}">
              <h2 id="mon-${s.id}">${vehicleName}: ${s.webhookUrl}</h2>
              <p>Tier ${s.tier} · ${s.events.length} event kinds · created ${time(s.createdAt)}</p>
              ${deleteButton(`/console/monitoring/${s.id}/delete`, monitoringDeleteConsequence(vehicleName, s))}
              ${endpointHealth(health)}
              <div data-live="/console/monitoring/${s.id}/deliveries${query}" aria-live="polite">
                ${monitoringDeliveries(viewer.csrfToken, deliveries, view.status)}
              </div>
              ${allDeliveriesLink(`/console/monitoring/${s.id}${query}`, `${vehicleName}: ${s.webhookUrl}`)}
            </section>`,
        )
  }
  ${pager('Subscription pages', (direction, cursor) => `/console/monitoring?${query ? `${query.slice(1)}&` : ''}${direction}=${cursor}`, view.page)}
  ${deleteDialog(viewer.csrfToken, 'Delete monitoring subscription?')}`;
  return page({ title: 'Monitoring', section: 'monitoring', viewer, body, scripts: ['live.js', 'confirm-dialog.js'] });
}

export interface MonitoringSubscriptionView {
  subscription: MonitoringSubscriptionRecord;
  vehicleName: string;
  deliveries: { rows: MonitoringDeliveryRecord[]; next: string | null; previous: string | null };
  statuses: readonly MonitoringDeliveryStatus[];
  status: MonitoringDeliveryStatus | null;
  notice: string | null;
  error: string | null;
}

/** One subscription's deliveries, a page at a time, by the same status filter as the list. */
export function monitoringSubscriptionPage(viewer: Viewer, view: MonitoringSubscriptionView): string {
  const { subscription: s, deliveries, status } = view;
  const path = `/console/monitoring/${s.id}`;
  const body = html`${alertBox(view.error)} ${noticeBox(view.notice)}
    <p>Tier ${s.tier} · ${s.events.length} event kinds · created ${time(s.createdAt)}</p>
    <p><a href="/console/monitoring">All monitoring subscriptions</a></p>
    ${statusFilter(path, view.statuses, status)}
    <h2>Deliveries</h2>
    ${monitoringDeliveries(viewer.csrfToken, deliveries.rows, status, s.id)}
    ${pager('Delivery pages', (direction, cursor) => `${path}?${status ? `status=${status}&` : ''}${direction}=${cursor}`, deliveries)}`;
  return page({ title: `Deliveries to ${view.vehicleName}: ${s.webhookUrl}`, section: 'monitoring', viewer, body });
}
