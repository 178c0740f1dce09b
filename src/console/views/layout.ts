/** The page shell every console page shares: head, skip link, navigation, one main with one h1. */
import { html, type Html } from '../html.js';
import { assetUrl, type AssetName } from '../assets.js';
import type { ConsoleRole } from '../../db/console-users.js';

export type Section =
  'vehicles' | 'api-keys' | 'webhooks' | 'monitoring' | 'usage' | 'activity' | 'requests' | 'team' | 'account';

/** The navigation; `team` only for admins (a developer never sees the link). */
const sections: Array<[Section, string]> = [
  ['vehicles', 'Vehicles'],
  ['api-keys', 'API keys'],
  ['webhooks', 'Webhooks'],
  ['monitoring', 'Monitoring'],
  ['usage', 'Usage'],
  ['activity', 'Activity'],
  ['requests', 'Requests'],
  ['team', 'Team'],
];

export interface Viewer {
  name: string;
  role: ConsoleRole;
  companyName: string;
  csrfToken: string;
}

function head(title: string, scripts: AssetName[], styles: AssetName[] = []): Html {
  return html`<head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${title} · Fleet console</title>
    <link rel="icon" href="${assetUrl('favicon.svg')}" type="image/svg+xml" />
    ${styles.map((name) => html`<link rel="stylesheet" href="${assetUrl(name)}" />`)}
    <link rel="stylesheet" href="${assetUrl('console.css')}" />
    ${scripts.map((name) => html`<script type="module" src="${assetUrl(name)}"></script>`)}
  </head>`;
}

/** A hidden field with the session's CSRF token; every console form that changes state carries one. */
export function csrfField(csrfToken: string): Html {
  return html`<input type="hidden" name="_csrf" value="${csrfToken}" />`;
}

/** A short confirmation of what the last action did. */
export function noticeBox(message: string | null): Html {
  return message ? html`<p class="notice" role="status">${message}</p>` : html``;
}

/** "Previous" and "Next" links of a list longer than a page (cursor paging: src/domain/keyset-page.ts). */
export function pager(
  label: string,
  href: (direction: 'next' | 'previous', cursor: string) => string,
  page: {
    next: string | null;
    previous: string | null;
  },
): Html {
  if (page.next === null && page.previous === null) return html``;
  return html`<nav class="pager" aria-label="${label}">
    ${page.previous !== null ? html`<a href="${href('previous', page.previous)}" rel="prev">Previous</a>` : ''}
    ${page.next !== null ? html`<a href="${href('next', page.next)}" rel="next">Next</a>` : ''}
  </nav>`;
}

/** An error the user must notice, announced by screen readers when it appears. */
export function alertBox(message: string | null): Html {
  return message ? html`<div class="alert" role="alert">${message}</div>` : html``;
}

export function page(options: {
  title: string;
  section: Section;
  viewer: Viewer;
  body: Html;
  scripts?: AssetName[];
  /** Stylesheets before the console's own, which may override them. */
  styles?: AssetName[];
}): string {
  const { title, section, viewer } = options;
  return `<!doctype html>${html`<html lang="en">
    ${head(title, options.scripts ?? [], options.styles)}
    <body>
      <a class="skip" href="#main">Skip to content</a>
      <header class="top">
        <span class="brand">Fleet console <span class="company">${viewer.companyName}</span></span>
        <nav aria-label="Console">
          <ul>
            ${sections
              .filter(([id]) => id !== 'team' || viewer.role === 'admin')
              .map(
                ([id, label]) =>
                  html`<li>
                    <a href="/console/${id}" ${id === section ? html`aria-current="page"` : ''}>${label}</a>
                  </li>`,
              )}
          </ul>
        </nav>
        <div class="account">
          <span class="who">${viewer.name}</span>
          <a href="/console/account" ${section === 'account' ? html`aria-current="page"` : ''}>Change password</a>
          <form method="post" action="/console/sign-out" class="sign-out">
            ${csrfField(viewer.csrfToken)}
            <button type="submit">Sign out</button>
          </form>
        </div>
      </header>
      <main id="main" tabindex="-1">
        <h1>${title}</h1>
        ${options.body}
      </main>
    </body>
  </html>`}`;
}

/** A page outside the signed-in shell (sign-in, refusals). */
export function barePage(title: string, body: Html): string {
  return `<!doctype html>${html`<html lang="en">
    ${head(title, [])}
    <body class="bare">
      <main id="main">
        <h1>${title}</h1>
        ${body}
      </main>
    </body>
  </html>`}`;
}
