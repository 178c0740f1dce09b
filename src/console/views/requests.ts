import type { ApiKeyRecord } from '../../db/api-keys.js';
import type { ApiRequestRecord } from '../../db/api-request-log.js';
import type { Page } from '../../domain/keyset-page.js';
import { html } from '../html.js';
import { time } from './format.js';
import { page, pager, type Viewer } from './layout.js';

export interface RequestsView {
  requests: Page<ApiRequestRecord>;
  keys: ApiKeyRecord[];
  filter: { statusClass: number | null; keyId: string | null };
}

export const statusClasses = [2, 3, 4, 5] as const;

function statusBadge(status: number): string {
  return status >= 500 ? 'failed' : status >= 400 ? 'pending' : 'succeeded';
}

export function requestsPage(viewer: Viewer, view: RequestsView): string {
  const { filter } = view;
  const query = new URLSearchParams();
  if (filter.statusClass !== null) query.set('status', `${filter.statusClass}xx`);
  if (filter.keyId !== null) query.set('key', filter.keyId);
  const href = (direction: string, cursor: string) => {
    const q = new URLSearchParams(query);
    q.set(direction, cursor);
    return `/console/requests?${q.toString()}`;
  };
  const body = html`<form method="get" action="/console/requests" class="inline">
      <label for="status-class">Status</label>
      <select id="status-class" name="status">
        <option value="" ${filter.statusClass === null ? html`selected` : ''}>All</option>
        ${statusClasses.map(
          (c) => html`<option value="${c}xx" ${filter.statusClass === c ? html`selected` : ''}>${c}xx</option>`,
        )}
      </select>
      <label for="request-key">Key</label>
      <select id="request-key" name="key">
        <option value="" ${filter.keyId === null ? html`selected` : ''}>All keys</option>
        ${view.keys.map(
          (k) =>
            html`<option value="${k.id}" ${filter.keyId === k.id ? html`selected` : ''}>
              ${k.name ?? 'Unnamed key'} (${k.keyPrefix}…)
            </option>`,
        )}
      </select>
      <button type="submit">Filter</button>
    </form>
    ${
      view.requests.rows.length === 0
        ? html`<p class="empty">
            No requests ${filter.statusClass !== null || filter.keyId !== null ? 'match this filter' : 'yet'} in the
            last 7 days. Calls to /api/v1 and /v1 made with your API keys appear here within seconds.
          </p>`
        : html`<table>
            <caption>
              API requests of the last 7 days, newest first; query values, headers and bodies are never kept
            </caption>
            <thead>
              <tr>
                <th scope="col">Time</th>
                <th scope="col">Method</th>
                <th scope="col">Path</th>
                <th scope="col">Status</th>
                <th scope="col" class="number">Duration</th>
                <th scope="col">Key</th>
              </tr>
            </thead>
            <tbody>
              ${view.requests.rows.map(
                (r) =>
                  html`<tr>
                    <td>${time(r.requestedAt)}</td>
                    <td>${r.method}</td>
                    <th scope="row"><code>${r.path}</code></th>
                    <td><span class="badge badge-${statusBadge(r.status)}">${r.status}</span></td>
                    <td class="number">${r.durationMs.toFixed(1)} ms</td>
                    <td><code>${r.keyPrefix}…</code></td>
                  </tr>`,
              )}
            </tbody>
          </table>`
    }
    ${pager('Request pages', href, view.requests)}`;
  return page({ title: 'Requests', section: 'requests', viewer, body });
}
