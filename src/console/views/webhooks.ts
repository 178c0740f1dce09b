import type { DeliveryRecord, SubscriptionRecord } from '../../db/webhooks.js';
import { html, type Html } from '../html.js';
import { time } from './format.js';
import { allDeliveriesLink, deliveryTable } from './delivery-table.js';
import { deleteButton, deleteDialog } from './delete-confirm.js';
import { alertBox, csrfField, page, pager, type Viewer } from './layout.js';

export interface WebhooksView {
  subscriptions: Array<{ subscription: SubscriptionRecord; deliveries: DeliveryRecord[] }>;
  /** Cursors of the subscriptions' pages (newest first). */
  page: { next: string | null; previous: string | null };
  kinds: readonly string[];
  /** What the create form shows again after a refusal. */
  draft: { url: string; events: string[] };
  created: { url: string; signingSecret: string } | null;
  notice: string | null;
  error: string | null;
}

function attemptSummary(delivery: DeliveryRecord): string {
  const last = delivery.attempts.at(-1);
  if (!last) return 'not attempted yet';
  if (last.response_status !== null) return `HTTP ${last.response_status} in ${last.duration_ms} ms`;
  return `${last.error_code ?? 'error'}${last.error_message ? `: ${last.error_message}` : ''}`;
}

/** The deliveries table of one subscription: the page's and the live region's markup. */
export function webhookDeliveries(deliveries: DeliveryRecord[]): Html {
  return deliveryTable({
    rows: deliveries.map((d) => ({ ...d, lastResponse: attemptSummary(d) })),
    empty: 'No deliveries yet. Use Send test to check the endpoint now; run events arrive as they happen.',
  });
}

export function webhookDeleteConsequence(s: SubscriptionRecord): string {
  return `${s.url} will receive no more events from the moment you delete it, test events included. This cannot be undone.`;
}

export function webhooksPage(viewer: Viewer, view: WebhooksView): string {
  const body = html`${alertBox(view.error)}
    ${view.notice ? html`<p class="notice" role="status">${view.notice}</p>` : ''}
    ${
      view.created
        ? html`<div class="once">
            <label for="signing-secret">Signing secret</label>
            <input id="signing-secret" readonly value="${view.created.signingSecret}" aria-describedby="secret-hint" />
            <p id="secret-hint">
              Shown once: store it with your receiver. Each delivery to ${view.created.url} carries
              <code>Service-Signature: t=…,v1=…</code>, an HMAC-SHA256 made with this secret.
            </p>
          </div>`
        : ''
    }
    <form method="post" action="/console/webhooks" class="stack">
      ${csrfField(viewer.csrfToken)}
      <label for="endpoint-url">Endpoint URL</label>
      <input
        id="endpoint-url"
        name="url"
        type="url"
        required
        maxlength="2048"
        placeholder="https://example.com/webhooks/fleet"
        value="${view.draft.url}"
      />
      <fieldset>
        <legend>Events</legend>
        ${view.kinds.map(
          (kind) =>
            html`<label class="check"
              ><input
                type="checkbox"
                name="events"
                value="${kind}"
                ${view.draft.events.includes(kind) ? html`checked` : ''}
              />
              ${kind}</label
            >`,
        )}
      </fieldset>
      <button type="submit">Create subscription</button>
    </form>
    <h2>Subscriptions</h2>
    ${
      view.subscriptions.length === 0
        ? html`<p class="empty">No subscriptions yet. Add your endpoint above to receive run events, signed.</p>`
        : view.subscriptions.map(
            ({ subscription: s, deliveries }) =>
              html`<section class="card" aria-labelledby="sub-${s.id}">
                <h3 id="sub-${s.id}">${s.url}</h3>
                <p>Events: ${s.events.join(', ')} · created ${time(s.createdAt)}</p>
                <div class="actions">
                  <form method="post" action="/console/webhooks/${s.id}/test" class="inline">
                    ${csrfField(viewer.csrfToken)}
                    <button type="submit">Send test</button>
                  </form>
                  ${deleteButton(`/console/webhooks/${s.id}/delete`, webhookDeleteConsequence(s))}
                </div>
                <h4>Deliveries</h4>
                <div data-live="/console/webhooks/${s.id}/deliveries" aria-live="polite">
                  ${webhookDeliveries(deliveries)}
                </div>
                ${allDeliveriesLink(`/console/webhooks/${s.id}`, s.url)}
              </section>`,
          )
    }
    ${pager('Subscription pages', (direction, cursor) => `/console/webhooks?${direction}=${cursor}`, view.page)}
    ${deleteDialog(viewer.csrfToken, 'Delete webhook subscription?')}`;
  return page({ title: 'Webhooks', section: 'webhooks', viewer, body, scripts: ['live.js', 'confirm-dialog.js'] });
}

/** One subscription's deliveries, a page at a time. */
export function webhookSubscriptionPage(
  viewer: Viewer,
  subscription: SubscriptionRecord,
  deliveries: { rows: DeliveryRecord[]; next: string | null; previous: string | null },
): string {
  const s = subscription;
  const body = html`<p>Events: ${s.events.join(', ')} · created ${time(s.createdAt)}</p>
    <p><a href="/console/webhooks">All webhook subscriptions</a></p>
    <h2>Deliveries</h2>
    ${webhookDeliveries(deliveries.rows)}
    ${pager('Delivery pages', (direction, cursor) => `/console/webhooks/${s.id}?${direction}=${cursor}`, deliveries)}`;
  return page({ title: `Deliveries to ${s.url}`, section: 'webhooks', viewer, body });
}
