/**
 * Deleting a subscription (Webhooks, Monitoring): a "Delete" button that opens an in-page dialog
 * (confirm-dialog.js), and without JavaScript a confirmation page; both post to the same address.
 */
import { html, type Html } from '../html.js';
import { csrfField, page, type Section, type Viewer } from './layout.js';

const dialogId = 'delete-dialog';

/** The row's "Delete" button: a GET of the confirmation page, which the script turns into the dialog. */
export function deleteButton(action: string, consequence: string): Html {
  return html`<form
    method="get"
    action="${action}"
    class="inline"
    data-confirm-dialog="${dialogId}"
    data-confirm-text="${consequence}"
  >
    <button type="submit" class="danger">Delete</button>
  </form>`;
}

export function deleteDialog(csrfToken: string, title: string): Html {
  return html`<dialog id="${dialogId}" aria-labelledby="delete-title" aria-describedby="delete-what">
    <h2 id="delete-title">${title}</h2>
    <p id="delete-what" data-confirm-text></p>
    <form method="post">
      ${csrfField(csrfToken)}
      <button type="submit" class="danger">Delete</button>
      <button type="button" value="cancel" data-close>Cancel</button>
    </form>
  </dialog>`;
}

/** The confirmation without JavaScript (the dialog's fallback). */
export function deleteConfirmPage(
  viewer: Viewer,
  options: { section: Section; title: string; consequence: string; action: string; cancel: string },
): string {
  const body = html`<p>${options.consequence}</p>
    <form method="post" action="${options.action}" class="inline">
      ${csrfField(viewer.csrfToken)}
      <button type="submit" class="danger">Delete</button>
      <a href="${options.cancel}">Cancel</a>
    </form>`;
  return page({ title: options.title, section: options.section, viewer, body });
}
