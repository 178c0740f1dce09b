import type { UsageReport } from '../../usage/usage-report.js';
import { html, type Html } from '../html.js';
import { money } from './format.js';
import { page, type Viewer } from './layout.js';

const productLabels: Record<string, string> = {
  history_report: 'History reports',
  verification: 'Instant verifications',
  monitoring: 'Monitored vehicles',
};

const series = [
  { key: 'history_report', label: 'History reports', colour: '#1d4ed8' },
  { key: 'verification', label: 'Verifications', colour: '#b45309' },
] as const;

/**
 * Daily metered calls as grouped bars, drawn on the server: no chart library in the browser.
 * Presentation attributes only (the CSP refuses style attributes). The same numbers are in the
 * table below it, for screen readers and for copying.
 */
export function dailyChart(daily: UsageReport['daily']): Html {
  const width = 720;
  const height = 220;
  const margin = { top: 16, right: 12, bottom: 28, left: 40 };
  const plotWidth = width - margin.left - margin.right;
  const plotHeight = height - margin.top - margin.bottom;
  const max = Math.max(1, ...daily.flatMap((d) => series.map((s) => d[s.key])));
  const slot = plotWidth / Math.max(1, daily.length);
  const bar = Math.max(1, (slot * 0.8) / series.length);
  const y = (value: number) => margin.top + plotHeight - (value / max) * plotHeight;
  const total = (key: (typeof series)[number]['key']) => daily.reduce((sum, d) => sum + d[key], 0);
  const description = `${daily.length} days from ${daily[0]?.date ?? '—'}: ${series
    .map((s) => `${total(s.key)} ${s.label.toLowerCase()}`)
    .join(', ')}; busiest day ${max} calls of one kind.`;
  return html`<svg
      class="chart"
      role="img"
      aria-labelledby="chart-title chart-desc"
      viewBox="0 0 ${width} ${height}"
      width="${width}"
      height="${height}"
    >
      <title id="chart-title">Daily usage this month</title>
      <desc id="chart-desc">${description}</desc>
      <line x1="${margin.left}" x2="${width - margin.right}" y1="${y(0)}" y2="${y(0)}" stroke="#6b7280" />
      <text x="${margin.left - 6}" y="${y(max) + 4}" text-anchor="end" font-size="11" fill="#374151">${max}</text>
      <text x="${margin.left - 6}" y="${y(0) + 4}" text-anchor="end" font-size="11" fill="#374151">0</text>
      ${daily.map((d, i) =>
        series.map(
          (s, j) =>
            html`<rect
              x="${(margin.left + i * slot + slot * 0.1 + j * bar).toFixed(1)}"
              y="${y(d[s.key]).toFixed(1)}"
              width="${bar.toFixed(1)}"
              height="${(y(0) - y(d[s.key])).toFixed(1)}"
              fill="${s.colour}"
            />`,
        ),
      )}
      ${daily
        .filter((_d, i) => i % 7 === 0)
        .map(
          (d) =>
            html`<text
              x="${(margin.left + daily.indexOf(d) * slot + slot / 2).toFixed(1)}"
              y="${height - 8}"
              text-anchor="middle"
              font-size="11"
              fill="#374151"
            >
              ${d.date.slice(5)}
            </text>`,
        )}
    </svg>
    <p class="legend">
      ${series.map(
        (s) =>
          html`<span
            ><svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" fill="${s.colour}" /></svg>
            ${s.label}</span
          > `,
      )}
    </p>`;
}

function discountTier(product: UsageReport['products'][number]): string {
  const current = product.custom_pricing
    ? 'custom pricing'
    : product.discount_tier.percent_off === 0
      ? 'list price'
      : `${product.discount_tier.percent_off} % off from unit ${product.discount_tier.from_unit.toLocaleString('en-US')}`;
  const next = product.next_discount_tier;
  return next
    ? `${current}; ${next.custom_pricing ? 'custom pricing' : `${next.percent_off} % off`} after ${next.units_to_go.toLocaleString('en-US')} more`
    : current;
}

export function usagePage(viewer: Viewer, report: UsageReport, currentMonth: string): string {
  const used = report.products.some((p) => p.quantity > 0);
  const body = html`<form method="get" action="/console/usage" class="inline">
      <label for="month">Month</label>
      <input id="month" name="month" type="month" value="${report.month}" max="${currentMonth}" />
      <button type="submit">Show</button>
    </form>
    ${
      used
        ? ''
        : html`<p class="empty">
            Nothing metered in ${report.month} yet. History reports (<code>POST /v1/history/report</code>), instant
            verifications (<code>POST /v1/instant/verify</code>) and monitored vehicles appear here as they are used.
          </p>`
    }
    <table>
      <caption>
        ${report.month}, ${report.currency}
      </caption>
      <thead>
        <tr>
          <th scope="col">Product</th>
          <th scope="col" class="number">Quantity</th>
          <th scope="col" class="number">Gross</th>
          <th scope="col" class="number">Discount</th>
          <th scope="col" class="number">Net</th>
          <th scope="col">Discount tier</th>
          <th scope="col" class="number">Projected</th>
        </tr>
      </thead>
      <tbody>
        ${report.products.map(
          (p) =>
            html`<tr>
              <th scope="row">${productLabels[p.product] ?? p.product}</th>
              <td class="number">${p.quantity.toLocaleString('en-US')}</td>
              <td class="number">${money(p.gross)}</td>
              <td class="number">${money(p.discount)}</td>
              <td class="number">${money(p.net)}</td>
              <td>${discountTier(p)}</td>
              <td class="number">${money(p.projected.net)}</td>
            </tr>`,
        )}
      </tbody>
      <tfoot>
        <tr>
          <th scope="row">Total</th>
          <td colspan="3"></td>
          <td class="number">${money(report.total)}</td>
          <td></td>
          <td class="number">${money(report.projected_total)}</td>
        </tr>
      </tfoot>
    </table>
    <p class="totals">
      Total so far <strong>${money(report.total)}</strong>; projected for the month
      <strong>${money(report.projected_total)}</strong>.
    </p>
    <h2>Daily usage</h2>
    ${dailyChart(report.daily)}
    <table>
      <caption>
        Daily metered calls
      </caption>
      <thead>
        <tr>
          <th scope="col">Day</th>
          ${series.map((s) => html`<th scope="col" class="number">${s.label}</th>`)}
        </tr>
      </thead>
      <tbody>
        ${report.daily.map(
          (d) =>
            html`<tr>
              <th scope="row">${d.date}</th>
              ${series.map((s) => html`<td class="number">${d[s.key]}</td>`)}
            </tr>`,
        )}
      </tbody>
    </table>`;
  return page({ title: 'Usage', section: 'usage', viewer, body });
}
