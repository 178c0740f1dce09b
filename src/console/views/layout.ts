/** The page shell every console page shares: head, skip link, navigation, one main with one h1. */
import { html, type Html } from '../html.js';
import { assetUrl, type AssetName } from '../assets.js';

export type Section = 'vehicles' | 'api-keys' | 'webhooks' | 'monitoring' | 'usage';

const sections: Array<[Section, string]> = [
  ['vehicles', 'Vehicles'],
  ['api-keys', 'API keys'],
  ['webhooks', 'Webhooks'],
  ['monitoring', 'Monitoring'],
  ['usage', 'Usage'],
];

export interface Viewer {
  name: string;
  companyName: string;
  csrfToken: string;
}

function head(title: string, scripts: AssetName[]): Html {
  return html`<head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${title} · Fleet console</title>
    <link rel="icon" href="${assetUrl('favicon.svg')}" type="image/svg+xml" />
    <link rel="stylesheet" href="${assetUrl('console.css')}" />
    ${scripts.map((name) => html`<script type="module" src="${assetUrl(name)}"></script>`)}
  </head>`;
}

/** A hidden field with the session's CSRF token; every console form that changes state carries one. */
export function csrfField(csrfToken: string): Html {
  return html`<input type="hidden" name="_csrf" value="${csrfToken}" />`;
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
}): string {
  const { title, section, viewer } = options;
  return `<!doctype html>${html`<html lang="en">
    ${head(title, options.scripts ?? [])}
    <body>
      <a class="skip" href="#main">Skip to content</a>
      <header class="top">
        <span class="brand">Fleet console <span class="company">${viewer.companyName}</span></span>
        <nav aria-label="Console">
          <ul>
            ${sections.map(
              ([id, label]) =>
                html`<li>
                  <a href="/console/${id}" ${id === section ? html`aria-current="page"` : ''}>${label}</a>
                </li>`,
            )}
          </ul>
        </nav>
        <form method="post" action="/console/sign-out" class="sign-out">
          ${csrfField(viewer.csrfToken)}
          <span class="who">${viewer.name}</span>
          <button type="submit">Sign out</button>
        </form>
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
