import { consoleRoles, type ConsoleUserRecord } from '../../db/console-users.js';
import { minPasswordLength } from '../../security/passwords.js';
import { html } from '../html.js';
import { time } from './format.js';
import { alertBox, csrfField, noticeBox, page, type Viewer } from './layout.js';

export interface TeamView {
  members: ConsoleUserRecord[];
  /** The user just invited and their temporary password, shown this once. */
  invited: { email: string; temporaryPassword: string } | null;
  notice: string | null;
  error: string | null;
  draft: { email: string; name: string; role: string };
}

const roleLabels = { admin: 'Admin', developer: 'Developer' } as const;

export function teamPage(viewer: Viewer, view: TeamView): string {
  const body = html`${alertBox(view.error)} ${noticeBox(view.notice)}
    ${
      view.invited
        ? html`<div class="once">
            <label for="temporary-password">Temporary password</label>
            <input
              id="temporary-password"
              readonly
              value="${view.invited.temporaryPassword}"
              aria-describedby="temporary-password-hint"
            />
            <p id="temporary-password-hint">
              Shown once: give it to ${view.invited.email} over a channel you trust. They sign in with it and change it
              under "Change password".
            </p>
          </div>`
        : ''
    }
    <h2>Invite a user</h2>
    <form method="post" action="/console/team" class="stack">
      ${csrfField(viewer.csrfToken)}
      <label for="invite-email">Email</label>
      <input id="invite-email" name="email" type="email" required maxlength="254" value="${view.draft.email}" />
      <label for="invite-name">Name</label>
      <input id="invite-name" name="name" required maxlength="200" value="${view.draft.name}" />
      <label for="invite-role">Role</label>
      <select id="invite-role" name="role">
        ${consoleRoles.map(
          (role) =>
            html`<option value="${role}" ${view.draft.role === role ? html`selected` : ''}>
              ${roleLabels[role]}
            </option>`,
        )}
      </select>
      <button type="submit">Invite</button>
    </form>
    <h2>Members</h2>
    <table>
      <thead>
        <tr>
          <th scope="col">Email</th>
          <th scope="col">Name</th>
          <th scope="col">Role</th>
          <th scope="col">Added</th>
          <th scope="col"><span class="visually-hidden">Actions</span></th>
        </tr>
      </thead>
      <tbody>
        ${view.members.map((m) =>
          m.disabledAt
            ? html`<tr class="disabled">
                <th scope="row">${m.email}</th>
                <td>${m.name}</td>
                <td>${roleLabels[m.role]}</td>
                <td>${time(m.createdAt)}</td>
                <td>Disabled ${time(m.disabledAt)}</td>
              </tr>`
            : html`<tr>
                <th scope="row">${m.email}</th>
                <td>${m.name}</td>
                <td>
                  <form method="post" action="/console/team/${m.id}/role" class="inline">
                    ${csrfField(viewer.csrfToken)}
                    <label class="visually-hidden" for="role-${m.id}">Role of ${m.email}</label>
                    <select id="role-${m.id}" name="role">
                      ${consoleRoles.map(
                        (role) =>
                          html`<option value="${role}" ${m.role === role ? html`selected` : ''}>
                            ${roleLabels[role]}
                          </option>`,
                      )}
                    </select>
                    <button type="submit">Change role</button>
                  </form>
                </td>
                <td>${time(m.createdAt)}</td>
                <td>
                  <form method="post" action="/console/team/${m.id}/disable" class="inline">
                    ${csrfField(viewer.csrfToken)}
                    <button type="submit" class="danger">Disable</button>
                  </form>
                </td>
              </tr>`,
        )}
      </tbody>
    </table>`;
  return page({ title: 'Team', section: 'team', viewer, body });
}

export function passwordPage(viewer: Viewer, view: { notice: string | null; error: string | null }): string {
  const body = html`${alertBox(view.error)} ${noticeBox(view.notice)}
    <form method="post" action="/console/account" class="stack">
      ${csrfField(viewer.csrfToken)}
      <label for="current-password">Current password</label>
      <input id="current-password" name="current" type="password" required autocomplete="current-password" />
      <label for="new-password">New password</label>
      <input
        id="new-password"
        name="next"
        type="password"
        required
        minlength="${minPasswordLength}"
        maxlength="1024"
        autocomplete="new-password"
        aria-describedby="new-password-hint"
      />
      <p id="new-password-hint">
        At least ${minPasswordLength} characters. Your other signed-in browsers are signed out.
      </p>
      <button type="submit">Change password</button>
    </form>`;
  return page({ title: 'Change password', section: 'account', viewer, body });
}
