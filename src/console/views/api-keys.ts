import type { ApiKeyRecord } from '../../db/api-keys.js';
import { html } from '../html.js';
import { time } from './format.js';
import { alertBox, csrfField, page, type Viewer } from './layout.js';

export interface ApiKeysView {
  keys: ApiKeyRecord[];
  /** The key just created, shown this once. */
  created: { name: string | null; key: string } | null;
  /** A short confirmation of what the last action did. */
  notice: string | null;
  error: string | null;
  /** The "Key name" typed before a refusal. */
  draftName: string;
}

function keyLabel(key: ApiKeyRecord): string {
  return key.name ?? `Unnamed key ${key.keyPrefix}…`;
}

export function apiKeysPage(viewer: Viewer, view: ApiKeysView): string {
  const active = view.keys.filter((k) => k.revokedAt === null);
  const body = html`${alertBox(view.error)}
    ${view.notice ? html`<p class="notice" role="status">${view.notice}</p>` : ''}
    ${
      view.created
        ? html`<div class="once">
            <label for="new-key">New API key</label>
            <input id="new-key" readonly value="${view.created.key}" aria-describedby="new-key-hint" />
            <p id="new-key-hint">
              Shown once: copy it now and keep it in your secret store. Send it as
              <code>Authorization: Bearer &lt;key&gt;</code>. Only its hash is kept here.
            </p>
          </div>`
        : ''
    }
    <form method="post" action="/console/api-keys" class="inline">
      ${csrfField(viewer.csrfToken)}
      <label for="key-name">Key name</label>
      <input id="key-name" name="name" maxlength="200" placeholder="e.g. production, CI" value="${view.draftName}" />
      <button type="submit">Create key</button>
    </form>
    <h2>Active keys</h2>
    ${
      active.length === 0
        ? html`<p class="empty">No active keys. Create one above to call the API (/api/v1 and /v1).</p>`
        : html`<table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Prefix</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col"><span class="visually-hidden">Actions</span></th>
              </tr>
            </thead>
            <tbody>
              ${active.map(
                (k) =>
                  html`<tr>
                    <th scope="row">${keyLabel(k)}</th>
                    <td><code>${k.keyPrefix}…</code></td>
                    <td>${time(k.createdAt)}</td>
                    <td>${time(k.lastUsedAt)}</td>
                    <td>
                      <form
                        method="get"
                        action="/console/api-keys/${k.id}/revoke"
                        data-confirm-dialog="revoke-dialog"
                        data-confirm-text="Calls made with ${keyLabel(k)} (${k.keyPrefix}…) will be refused with 401 from now on. This cannot be undone."
                      >
                        <button type="submit" class="danger">Revoke</button>
                      </form>
                    </td>
                  </tr>`,
              )}
            </tbody>
          </table>`
    }
    <dialog id="revoke-dialog" aria-labelledby="revoke-title" aria-describedby="revoke-what">
      <h2 id="revoke-title">Revoke API key?</h2>
      <p id="revoke-what" data-confirm-text></p>
      <form method="post" action="/console/api-keys">
        ${csrfField(viewer.csrfToken)}
        <button type="submit" class="danger">Revoke</button>
        <button type="button" value="cancel" data-close>Cancel</button>
      </form>
    </dialog>`;
  return page({ title: 'API keys', section: 'api-keys', viewer, body, scripts: ['confirm-dialog.js'] });
}

/** The confirmation without JavaScript (the dialog's fallback). */
export function revokeConfirmPage(viewer: Viewer, key: ApiKeyRecord): string {
  const body = html`<p>
      Calls made with <strong>${keyLabel(key)}</strong> (<code>${key.keyPrefix}…</code>) will be refused with 401 from
      the moment you revoke it. This cannot be undone.
    </p>
    <form method="post" action="/console/api-keys/${key.id}/revoke" class="inline">
      ${csrfField(viewer.csrfToken)}
      <button type="submit" class="danger">Revoke</button>
      <a href="/console/api-keys">Cancel</a>
    </form>`;
  return page({ title: 'Revoke API key', section: 'api-keys', viewer, body });
}
