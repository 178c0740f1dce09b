import type { VehicleRecord } from '../../domain/vehicle.js';
import { html, type Html } from '../html.js';
import { time } from './format.js';
import { page, pager, type Viewer } from './layout.js';
import type { Page } from '../../domain/keyset-page.js';

const healthLabels: Record<string, string> = {
  ok: 'OK',
  needs_attention: 'Needs attention',
  critical: 'Critical',
  unknown: 'Unknown',
};

function healthBadge(status: string): Html {
  return html`<span class="badge badge-${status}">${healthLabels[status] ?? status}</span>`;
}

function linkState(vehicle: VehicleRecord): string {
  if (vehicle.telematicsProvider === null) return 'Manual (no tracker)';
  if (vehicle.linkBroken === null) return 'Connected';
  return {
    no_reading: 'Broken: no reading',
    stale: 'Broken: stale odometer',
    conflict: 'Broken: conflicting odometer',
  }[vehicle.linkBroken.reason];
}

function vehicleTitle(vehicle: VehicleRecord): string {
  return vehicle.name ?? vehicle.licensePlate ?? vehicle.vin ?? vehicle.id;
}

export function vehiclesPage(viewer: Viewer, list: Page<VehicleRecord>): string {
  const vehicles = list.rows;
  const body =
    vehicles.length === 0 && list.previous === null
      ? html`<p class="empty">
          No vehicles yet. Your operator adds them (<code>fleetctl vehicle add</code>) or connects a telematics
          provider; they appear here with their health as soon as readings arrive.
        </p>`
      : html`<table>
          <caption>
            Active vehicles, most recently changed first
          </caption>
          <thead>
            <tr>
              <th scope="col">Vehicle</th>
              <th scope="col">Plate</th>
              <th scope="col">Health</th>
              <th scope="col">Link</th>
              <th scope="col">Last seen</th>
            </tr>
          </thead>
          <tbody>
            ${vehicles.map(
              (v) =>
                html`<tr>
                  <th scope="row"><a href="/console/vehicles/${v.id}">${vehicleTitle(v)}</a></th>
                  <td>${v.licensePlate ?? '—'}</td>
                  <td>${healthBadge(v.health.status)}</td>
                  <td>${linkState(v)}</td>
                  <td>${time(v.asOf)}</td>
                </tr>`,
            )}
          </tbody>
        </table>`;
  const href = (direction: string, cursor: string) => `/console/vehicles?${direction}=${cursor}`;
  return page({
    title: 'Vehicles',
    section: 'vehicles',
    viewer,
    body: html`${body} ${pager('Vehicle pages', href, list)}`,
  });
}

function signalValue(value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (typeof value !== 'object') return String(value);
  if (Array.isArray(value)) return value.length === 0 ? 'none' : value.map((v) => signalValue(v)).join(', ');
  return Object.entries(value as Record<string, unknown>)
    .filter(([key]) => key !== 'as_of')
    .map(([key, v]) => `${key}: ${signalValue(v)}`)
    .join(', ');
}

export function vehiclePage(viewer: Viewer, vehicle: VehicleRecord, signals: Record<string, unknown>): string {
  const entries = Object.entries(signals);
  const body = html`<p><a href="/console/vehicles">All vehicles</a></p>
    <dl class="facts">
      <dt>Health</dt>
      <dd>${healthBadge(vehicle.health.status)}</dd>
      <dt>Link</dt>
      <dd>${linkState(vehicle)}</dd>
      <dt>Last seen</dt>
      <dd>${time(vehicle.asOf)}</dd>
      <dt>VIN</dt>
      <dd>${vehicle.vin ?? '—'}</dd>
      <dt>Make and model</dt>
      <dd>${[vehicle.year, vehicle.make, vehicle.model].filter((p) => p !== null).join(' ') || '—'}</dd>
    </dl>
    <h2>Alerts</h2>
    ${
      vehicle.health.alerts.length === 0
        ? html`<p class="empty">No open alerts.</p>`
        : html`<table>
            <thead>
              <tr>
                <th scope="col">Alert</th>
                <th scope="col">Severity</th>
                <th scope="col">Due</th>
              </tr>
            </thead>
            <tbody>
              ${vehicle.health.alerts.map(
                (a) =>
                  html`<tr>
                    <th scope="row">${a.display_name}</th>
                    <td>${a.severity}</td>
                    <td>
                      ${a.due_date ?? ''}${a.due_miles_remaining !== null ? ` ${a.due_miles_remaining} miles left` : ''}
                    </td>
                  </tr>`,
              )}
            </tbody>
          </table>`
    }
    <h2>Signals</h2>
    ${
      entries.length === 0
        ? html`<p class="empty">No readings yet: signals appear with the first reading from the vehicle's tracker.</p>`
        : html`<table>
            <thead>
              <tr>
                <th scope="col">Signal</th>
                <th scope="col">Value</th>
              </tr>
            </thead>
            <tbody>
              ${entries.map(
                ([name, value]) =>
                  html`<tr>
                    <th scope="row">${name}</th>
                    <td>${signalValue(value)}</td>
                  </tr>`,
              )}
            </tbody>
          </table>`
    }`;
  return page({ title: vehicleTitle(vehicle), section: 'vehicles', viewer, body });
}
