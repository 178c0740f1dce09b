import type { AuditEventRecord } from '../../db/audit-events.js';
import type { Page } from '../../domain/keyset-page.js';
import { auditActions, type AuditAction } from '../../audit/record.js';
import { html } from '../html.js';
import { time } from './format.js';
import { page, pager, type Viewer } from './layout.js';

const targetLabels: Record<string, string> = {
  api_key: 'API key',
  webhook_subscription: 'Webhook subscription',
  monitoring_subscription: 'Monitoring subscription',
  user: 'User',
};

export function activityPage(viewer: Viewer, events: Page<AuditEventRecord>): string {
  const href = (direction: string, cursor: string) => `/console/activity?${direction}=${cursor}`;
  const body =
    events.rows.length === 0
      ? html`<p class="empty">No activity yet. Keys, subscriptions, team changes and sign-ins appear here.</p>`
      : html`<table>
            <caption>
              Changes made by your team and your API keys, newest first; kept 365 days
            </caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Who</th>
                <th scope="col">What</th>
                <th scope="col">Target</th>
              </tr>
            </thead>
            <tbody>
              ${events.rows.map(
                (e) =>
                  html`<tr>
                    <td>${time(e.occurredAt)}</td>
                    <td>${e.actorKind === 'api_key' ? html`API key <code>${e.actorLabel}…</code>` : e.actorLabel}</td>
                    <th scope="row">${auditActions[e.action as AuditAction] ?? e.action}</th>
                    <td>${targetLabels[e.targetType] ?? e.targetType} <code>${e.targetId}</code></td>
                  </tr>`,
              )}
            </tbody>
          </table>
          ${pager('Activity pages', href, events)}`;
  return page({ title: 'Activity', section: 'activity', viewer, body });
}
