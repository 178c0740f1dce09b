/** One table for the deliveries of a subscription, core webhook or monitoring: the page's and the live region's markup. */
import { html, type Html } from '../html.js';
import { time } from './format.js';

export interface DeliveryRow {
  event: string;
  status: string;
  attemptCount: number;
  /** The last attempt's answer (HTTP status and duration) or error. */
  lastResponse: string;
  createdAt: Date;
}

export interface DeliveryTable<Row extends DeliveryRow> {
  rows: readonly Row[];
  /** What the table says when there is no row. */
  empty: string;
  /** When the next attempt is due, for deliveries retried on a schedule (monitoring). */
  nextAttempt?: (row: Row) => Date | null;
  /** A form acting on one delivery (Retry), for a column of its own. */
  action?: (row: Row) => Html | null;
}

export function deliveryTable<Row extends DeliveryRow>(table: DeliveryTable<Row>): Html {
  if (table.rows.length === 0) return html`<p class="empty">${table.empty}</p>`;
  const { nextAttempt, action } = table;
  return html`<table>
    <thead>
      <tr>
        <th scope="col">Event</th>
        <th scope="col">Status</th>
        <th scope="col">Attempts</th>
        <th scope="col">Last response</th>
        ${nextAttempt && html`<th scope="col">Next attempt</th>`}
        <th scope="col">Created</th>
        ${action && html`<th scope="col"><span class="visually-hidden">Actions</span></th>`}
      </tr>
    </thead>
    <tbody>
      ${table.rows.map(
        (row) =>
          html`<tr>
            <th scope="row">${row.event}</th>
            <td><span class="badge badge-${row.status}">${row.status}</span></td>
            <td>${row.attemptCount}</td>
            <td>${row.lastResponse}</td>
            ${nextAttempt && html`<td>${time(nextAttempt(row), '—')}</td>`}
            <td>${time(row.createdAt)}</td>
            ${action && html`<td>${action(row)}</td>`}
          </tr>`,
      )}
    </tbody>
  </table>`;
}

/** The link from a subscription's newest deliveries to all of them, named after the subscription for a screen reader's list of links. */
export function allDeliveriesLink(href: string, subscriptionName: string): Html {
  return html`<p>
    <a href="${href}">All deliveries<span class="visually-hidden"> of ${subscriptionName}</span></a>
  </p>`;
}
