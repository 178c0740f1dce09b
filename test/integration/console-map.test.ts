/**
 * The Vehicles page's map in Chromium (DESIGN §12 "Second round"): the page's vehicles' last
 * positions as markers, offline (every tile request is aborted, as on a machine without a
 * network), the table with the same positions beside it, axe, tenant isolation, and the CSP
 * widened for the tile host on that page alone. Role and label locators only;
 * CONSOLE_SCREENSHOTS=1 saves docs/images/console-vehicles-map.png.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import {
  expectAccessible,
  expectOneHeading,
  launchConsoleBrowser,
  shoot,
  signIn as signInAs,
  textOf,
  type ConsoleBrowser,
} from '../helpers/browser.js';
import { signInToConsole } from '../helpers/console.js';
import { createConnection, pushGeneric, settle } from '../helpers/ingest.js';

const password = 'correct horse battery staple';
const tileOrigin = 'https://tile.openstreetmap.org';

let t: TestApp;
let browser: ConsoleBrowser;
let base: string;
/** Every tile a page asked for (each aborted) with its Referer, and every other address a page loaded. */
const tileRequests: Array<{ url: string; referer: string | undefined }> = [];
const otherRequests: string[] = [];

interface Placed {
  name: string;
  lat: number;
  lon: number;
}

const acmeTrucks: Placed[] = [
  { name: 'Truck 1', lat: 41.8781, lon: -87.6298 },
  { name: 'Truck 2', lat: 41.9484, lon: -87.6553 },
  { name: 'Truck 3', lat: 41.7943, lon: -87.5907 },
];
/** Another company's vehicle, inside the same bounds: were it leaked, it would be on the map. */
const otherTruck: Placed = { name: 'Other Co truck', lat: 41.9, lon: -87.64 };

const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();

/**
 * A company with a console user and vehicles whose positions come through the real ingest path;
 * the last vehicle's newest reading (a minute later) has no position.
 */
async function company(name: string, email: string, placed: Placed[]): Promise<string> {
  const created = await t.createCompany(name);
  const user = await t.admin('POST', `/companies/${created.id}/users`, { email, name: `${name} Dev`, password });
  expect(user.statusCode).toBe(201);
  const connection = await createConnection(t, created.id, 'generic');
  for (const [i, truck] of placed.entries()) {
    await t.createVehicle(created.id, {
      name: truck.name,
      vin: null,
      license_plate: `${name.slice(0, 3).toUpperCase()}-${i + 1}`,
      provider_connection_id: connection.id,
      provider_vehicle_id: `${email}-${i}`,
    });
  }
  const response = await pushGeneric(t, 'generic', connection.id, connection.generated_secret!, {
    readings: [
      ...placed.map((truck, i) => ({
        vehicle: `${email}-${i}`,
        ts: minutesAgo(5),
        signals: { odometer_km: 10_000 + i, location: { lat: truck.lat, lon: truck.lon, heading: 90 } },
      })),
      { vehicle: `${email}-${placed.length - 1}`, ts: minutesAgo(4), signals: { odometer_km: 10_100 } },
    ],
  });
  expect(response.statusCode).toBe(202);
  return created.id;
}

async function newPage(): Promise<Page> {
  const page = await browser.newPage();
  // Offline: no tile ever loads. Anything else must come from the console itself.
  await page.context().route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith(`${tileOrigin}/`)) {
      tileRequests.push({ url, referer: route.request().headers().referer });
      return route.abort('internetdisconnected');
    }
    if (!url.startsWith(`${base}/`)) otherRequests.push(url);
    return route.continue();
  });
  return page;
}

function signIn(page: Page, email: string): Promise<void> {
  return signInAs(page, email, password);
}

beforeAll(async () => {
  t = await createTestApp();
  await t.startWorkers(['ingest', 'health']);
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  browser = await launchConsoleBrowser(base);
  const acmeId = await company('Acme Fleet', 'dev@acme.test', acmeTrucks);
  // A vehicle without a tracker has no position: the page says so.
  await t.createVehicle(acmeId, { name: 'Parked trailer', vin: null, license_plate: 'TRL-1' });
  await company('Other Co', 'dev@other.test', [otherTruck]);
  await settle(t);
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe('console vehicle map', () => {
  it("shows the page's vehicles as markers with no tile loaded, the same positions in the table, and passes axe", async () => {
    const page = await newPage();
    await signIn(page, 'dev@acme.test');
    const map = page.getByRole('region', { name: 'Map of last positions' });
    await map.waitFor();
    const markers = map.getByRole('button', { name: /^Truck \d$/ });
    for (const truck of acmeTrucks) await map.getByRole('button', { name: truck.name, exact: true }).waitFor();
    expect(await markers.count()).toBe(acmeTrucks.length);
    expect(await map.getByRole('button', { name: otherTruck.name }).count()).toBe(0);
    expect(await map.textContent()).toContain('© OpenStreetMap contributors');
    expect(await textOf(page.getByRole('note'))).toBe(
      'The map shows the last position of 3 of the 4 vehicles on this page; the table lists each position and when it was reported. No position reported yet: Parked trailer.',
    );

    // The table gives everyone what the map shows; a position older than the last reading has its time.
    const table = page.getByRole('table', { name: /Active vehicles/ });
    const positionOf = async (name: string) =>
      textOf(
        table
          .getByRole('row', { name: new RegExp(`^${name} `) })
          .getByRole('cell')
          .last(),
      );
    expect(await positionOf('Truck 1')).toBe('41.87810, -87.62980');
    expect(await positionOf('Truck 2')).toBe('41.94840, -87.65530');
    expect(await positionOf('Truck 3')).toMatch(/^41\.79430, -87\.59070\s+at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    expect(await positionOf('Parked trailer')).toBe('No position yet');
    expect(await table.getByRole('row', { name: new RegExp(otherTruck.name) }).count()).toBe(0);

    await shoot(page, 'vehicles-map');

    // A marker names its vehicle and links to it, from the keyboard too.
    await map.getByRole('button', { name: 'Truck 1', exact: true }).focus();
    await page.keyboard.press('Enter');
    await map.getByRole('link', { name: 'Truck 1' }).waitFor();
    await expectAccessible(page);
    await map.getByRole('link', { name: 'Truck 1' }).click();
    await expectOneHeading(page, 'Truck 1');

    // Tiles were asked for (the CSP let them through), with the console's origin alone as Referer,
    // and none loaded; nothing else left the console.
    expect(tileRequests.length).toBeGreaterThan(0);
    expect(new Set(tileRequests.map((tile) => tile.referer))).toEqual(new Set([`${base}/`]));
    expect(otherRequests).toEqual([]);
  });

  it("shows another company only its own vehicle's marker", async () => {
    const page = await newPage();
    await signIn(page, 'dev@other.test');
    const map = page.getByRole('region', { name: 'Map of last positions' });
    await map.getByRole('button', { name: otherTruck.name }).waitFor();
    expect(await map.getByRole('button', { name: /^Truck \d$/ }).count()).toBe(0);
    expect(await textOf(page.getByRole('note'))).toBe(
      'The map shows the last position of the vehicle on this page; the table lists each position and when it was reported.',
    );
  });

  it("widens the CSP for the tile host's images on the Vehicles page alone", async () => {
    const page = await newPage();
    await signIn(page, 'dev@acme.test');
    const vehicles = await page.goto('/console/vehicles');
    expect(vehicles!.headers()['content-security-policy']).toBe(
      `default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'; img-src 'self' ${tileOrigin}`,
    );
    const keys = await page.goto('/console/api-keys');
    expect(keys!.headers()['content-security-policy']).not.toContain(tileOrigin);
  });

  it('draws no map, and loads no Leaflet, when no vehicle of the page has a position; the note says so', async () => {
    const created = await t.createCompany('Trailer Co');
    const email = 'dev@trailers.test';
    expect((await t.admin('POST', `/companies/${created.id}/users`, { email, name: 'T', password })).statusCode).toBe(
      201,
    );
    await t.createVehicle(created.id, { name: 'Trailer 9', vin: null });
    const page = await (await signInToConsole(t, email, password)).get('/console/vehicles');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('No vehicle on this page has reported a position yet, so there is no map.');
    expect(page.body).not.toContain('Map of last positions');
    expect(page.body).not.toContain('leaflet');
  });
});
