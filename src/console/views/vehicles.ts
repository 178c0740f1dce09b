import type { MapTiles } from '../../config.js';
import type { Location } from '../../domain/sample.js';
import type { VehicleRecord } from '../../domain/vehicle.js';
import { assetUrl } from '../assets.js';
import { html, type Html } from '../html.js';
import { time } from './format.js';
import { page, pager, type Viewer } from './layout.js';
import type { Page } from '../../domain/keyset-page.js';

/** The map's tiles and their attribution (CONSOLE_MAP_TILES_URL, CONSOLE_MAP_ATTRIBUTION). */
export interface MapSettings {
  tiles: MapTiles;
  attribution: string;
}

interface Position {
  lat: number;
  lon: number;
  at: string;
}

/** The vehicle's last known position: its `location` signal, as the read model keeps it. */
function lastPosition(vehicle: VehicleRecord): Position | null {
  const location = vehicle.signals.location as (Location & { as_of?: string }) | undefined;
  if (typeof location?.lat !== 'number' || typeof location.lon !== 'number') return null;
  return { lat: location.lat, lon: location.lon, at: location.as_of ?? '' };
}

function coordinates(position: Position): string {
  return `${position.lat.toFixed(5)}, ${position.lon.toFixed(5)}`;
}

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

/**
 * The map of the page's vehicles (the same rows as the table, so paging moves both), drawn by
 * vehicle-map.js from data attributes. Without JavaScript it stays hidden; the note under it, and
 * the table's "Last position" column, say the same to everyone.
 */
function vehicleMap(vehicles: VehicleRecord[], map: MapSettings): Html {
  const placed = vehicles.flatMap((v) => {
    const position = lastPosition(v);
    return position ? [{ id: v.id, name: vehicleTitle(v), ...position }] : [];
  });
  const unplaced = vehicles.filter((v) => lastPosition(v) === null).map(vehicleTitle);
  const shown =
    placed.length === 0
      ? 'No vehicle on this page has reported a position yet, so there is no map.'
      : placed.length === vehicles.length
        ? `The map shows the last position of ${vehicles.length === 1 ? 'the vehicle' : `all ${vehicles.length} vehicles`} on this page; the table lists each position and when it was reported.`
        : `The map shows the last position of ${placed.length} of the ${vehicles.length} vehicles on this page; the table lists each position and when it was reported.`;
  const note = html`<p id="vehicle-map-note" class="hint" role="note">
    ${shown} ${unplaced.length > 0 && placed.length > 0 && `No position reported yet: ${unplaced.join(', ')}.`}
  </p>`;
  if (placed.length === 0) return html`<div class="map-panel">${note}</div>`;
  return html`<div class="map-panel">
    <div
      id="vehicle-map"
      class="vehicle-map"
      role="region"
      aria-label="Map of last positions"
      aria-describedby="vehicle-map-note"
      hidden
      data-positions="${JSON.stringify(placed)}"
      data-tiles="${map.tiles.urlTemplate}"
      data-attribution="${map.attribution}"
      data-marker="${assetUrl('map-marker.svg')}"
    ></div>
    ${note}
  </div>`;
}

/** Coordinates, and the fix's time when it is not the vehicle's last reading ("Last seen"). */
function positionCell(vehicle: VehicleRecord): Html {
  const position = lastPosition(vehicle);
  if (position === null) return html`<td>No position yet</td>`;
  const older = position.at !== '' && Date.parse(position.at) !== vehicle.asOf?.getTime();
  return html`<td>
    <span class="position">${coordinates(position)}</span>
    ${older && html`<span class="fix-time">at ${time(position.at)}</span>`}
  </td>`;
}

export function vehiclesPage(viewer: Viewer, list: Page<VehicleRecord>, map: MapSettings): string {
  const vehicles = list.rows;
  const body =
    vehicles.length === 0 && list.previous === null
      ? html`<p class="empty">
          No vehicles yet. Your operator adds them (<code>fleetctl vehicle add</code>) or connects a telematics
          provider; they appear here with their health as soon as readings arrive.
        </p>`
      : html`<div class="vehicles">
          ${vehicleMap(vehicles, map)}
          <table>
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
                <th scope="col">Last position</th>
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
                    ${positionCell(v)}
                  </tr>`,
              )}
            </tbody>
          </table>
        </div>`;
  const href = (direction: string, cursor: string) => `/console/vehicles?${direction}=${cursor}`;
  return page({
    title: 'Vehicles',
    section: 'vehicles',
    viewer,
    body: html`${body} ${pager('Vehicle pages', href, list)}`,
    // Leaflet only where there is a map to draw.
    ...(vehicles.some((v) => lastPosition(v) !== null)
      ? { styles: ['leaflet.css'], scripts: ['leaflet.js', 'vehicle-map.js'] }
      : {}),
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
