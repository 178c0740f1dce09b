/** How the console shows times and numbers: UTC, to the second, the same on every page and in tests. */
import { html, type Html } from '../html.js';

export function time(at: Date | string | null, empty = 'never'): Html {
  if (at === null) return html`${empty}`;
  const iso = new Date(at).toISOString();
  return html`<time datetime="${iso}">${iso.slice(0, 19).replace('T', ' ')} UTC</time>`;
}

export function money(amountUsd: number): string {
  return `$${amountUsd.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}
