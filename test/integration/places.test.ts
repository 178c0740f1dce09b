/**
 * Place names for every provider (issue 18, docs/places.md), end to end: readings pushed or pulled
 * in each provider's own format (generic, Traccar OsmAnd, Geotab GetFeed, Smartcar, Samsara) give
 * the history report's incidents a "City, Region, CC" location beside the rounded coordinates, in
 * the JSON and the PDF, and the instant verification an address: the provider's own where it sent
 * one (Samsara's reverse geocoding), else the nearest place.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hmacHex } from '../../providers/signing.js';
import { checkDigitOf } from '../../src/domain/vin.js';
import { createPullDeps, pullFeed, type PullDeps } from '../../src/ingest/pulls.js';
import { createLogger } from '../../src/log.js';
import { createMetrics } from '../../src/metrics.js';
import { projectRoot } from '../../src/paths.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { startFakeProvider, type FakeProvider } from '../helpers/fake-provider.js';
import { createConnection, pushGeneric, settle } from '../helpers/ingest.js';

let t: TestApp;
let providerApi: FakeProvider;
let fleet: { id: string; key: string };
let deps: PullDeps;
const dir = mkdtempSync(join(tmpdir(), 'places-'));

const fixture = (provider: string, file: string) =>
  readFileSync(join(projectRoot, 'test/fixtures/providers', provider, file), 'utf8');

/** A valid VIN per serial (its check digit computed). */
function vinOf(serial: number): string {
  const draft = `1FTFW1E50PK${String(serial).padStart(6, '0')}`;
  return `${draft.slice(0, 8)}${checkDigitOf(draft)}${draft.slice(9)}`;
}

const vins = { generic: vinOf(1), traccar: vinOf(2), geotab: vinOf(3), smartcar: vinOf(4), samsara: vinOf(5) };

function post(path: string, body: Record<string, unknown>) {
  return t.app.inject({ method: 'POST', url: path, headers: { authorization: `Bearer ${fleet.key}` }, payload: body });
}

async function incidentsOf(vin: string) {
  const response = await post('/v1/history/report', { vin, tier: 'lifetime' });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data.incidents;
}

async function locationOf(vin: string) {
  const response = await post('/v1/instant/verify', { vin });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data.location;
}

/** Geotab's JSON-RPC: a session, then each feed type's page from the fixtures (none for the others). */
function answerGeotab() {
  providerApi.on('POST /apiv1', (request) => {
    const { method, params } = JSON.parse(request.body) as { method: string; params: { typeName?: string } };
    if (method === 'Authenticate') return { body: fixture('geotab', 'authenticate.json') };
    if (params.typeName === 'LogRecord') return { body: fixture('geotab', 'getfeed-logrecord.json') };
    if (params.typeName === 'ExceptionEvent') return { body: fixture('geotab', 'getfeed-exceptionevent.json') };
    return { body: { jsonrpc: '2.0', result: { toVersion: '0000000000000001', data: [] } } };
  });
}

/** Samsara's stats feeds and safety events: the gps feed carries its reverse geocoding. */
function answerSamsara() {
  providerApi.on('GET /fleet/vehicles/stats/feed', (request) => {
    const types = request.query.get('types') ?? '';
    if (types.startsWith('gps')) return { body: fixture('samsara', 'feed.json') };
    if (types.startsWith('engine')) return { body: fixture('samsara', 'feed-engine.json') };
    return { body: { data: [], pagination: { endCursor: 'none', hasNextPage: false } } };
  });
  providerApi.on('GET /fleet/safety-events', { body: fixture('samsara', 'safety-events.json') });
}

beforeAll(async () => {
  t = await createTestApp({ WEBHOOK_ALLOW_NETS: '127.0.0.1/32', RATE_LIMIT_PER_MINUTE: '1000' });
  providerApi = await startFakeProvider();
  fleet = await t.createCompany('Places Fleet');
  deps = createPullDeps({
    config: t.config,
    pool: t.pool,
    queues: t.queues,
    log: createLogger('silent'),
    metrics: createMetrics('places-test'),
    now: () => new Date(),
  });
  await t.startWorkers(['ingest', 'health']);

  // Generic: an impact in Chicago, with its fix.
  const generic = await createConnection(t, fleet.id, 'generic');
  await t.createVehicle(fleet.id, {
    vin: vins.generic,
    provider_connection_id: generic.id,
    provider_vehicle_id: 'van-7',
  });
  const pushed = await pushGeneric(t, 'generic', generic.id, generic.generated_secret!, {
    readings: [
      {
        vehicle: 'van-7',
        ts: '2026-11-10T09:00:00Z',
        signals: { location: { lat: 41.85003, lon: -87.65005, heading: 90 }, events: [{ type: 'impact', g: 2.1 }] },
      },
    ],
  });
  expect(pushed.statusCode, pushed.body).toBe(202);

  // Traccar OsmAnd: a tracker's accident alarm in Austin.
  const traccar = await createConnection(t, fleet.id, 'traccar');
  await t.createVehicle(fleet.id, {
    vin: vins.traccar,
    provider_connection_id: traccar.id,
    provider_vehicle_id: '358240051111110',
  });
  const osmand = await t.app.inject({
    method: 'GET',
    url: `${new URL(traccar.ingest_url!).pathname}?id=358240051111110&timestamp=1794301200&lat=30.2672&lon=-97.7431&speed=12&alarm=accident`,
  });
  expect(osmand.statusCode, osmand.body).toBe(202);

  // Smartcar: a VEHICLE_STATE delivery with the car's position in London (Smartcar sends no crash events).
  const token = 'smartcar-application-management-token';
  const smartcar = await createConnection(t, fleet.id, 'smartcar', { webhook_secret: token });
  await t.createVehicle(fleet.id, {
    vin: vins.smartcar,
    provider_connection_id: smartcar.id,
    provider_vehicle_id: 'veh-imperial-1',
  });
  const state = fixture('smartcar', 'webhook.vehicle_state.full.json').replace('1777903500000', String(Date.now()));
  const delivered = await t.app.inject({
    method: 'POST',
    url: `/ingest/v1/smartcar/${smartcar.id}`,
    headers: { 'content-type': 'application/json', 'sc-signature': hmacHex('sha256', token, state) },
    payload: state,
  });
  expect(delivered.statusCode, delivered.body).toBe(202);

  // Geotab: pulled from its API (faked on loopback): LogRecords near Oakville, Ontario, and an accident.
  answerGeotab();
  const geotab = await createConnection(t, fleet.id, 'geotab', {
    base_url: providerApi.url,
    database: 'acme',
    username: 'api@acme.com',
    password: 'geotab-password',
  });
  await t.createVehicle(fleet.id, { vin: vins.geotab, provider_connection_id: geotab.id, provider_vehicle_id: 'b2A' });
  // One feed type per pull, in turn: StatusData, LogRecord, FaultData, ExceptionEvent.
  for (let i = 0; i < 4; i++) await pullFeed(deps, geotab.id);

  // Samsara: pulled too; its gps points carry "Hyde Street, San Francisco, CA".
  answerSamsara();
  const samsara = await createConnection(t, fleet.id, 'samsara', { api_token: 'token', base_url: providerApi.url });
  await t.createVehicle(fleet.id, {
    vin: vins.samsara,
    provider_connection_id: samsara.id,
    provider_vehicle_id: '281474977075805',
  });
  await pullFeed(deps, samsara.id);
  await settle(t);
}, 120_000);

afterAll(async () => {
  await t.close();
  await providerApi.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('history report incidents', () => {
  it.each([
    ['generic', vins.generic, 'Chicago, Illinois, US', { lat: 41.9, lon: -87.7 }, '2026-11-10'],
    ['Traccar', vins.traccar, 'Austin, Texas, US', { lat: 30.3, lon: -97.7 }, '2026-11-10'],
    ['Geotab', vins.geotab, 'Oakville, Ontario, CA', { lat: 43.5, lon: -79.7 }, '2026-01-27'],
  ])(
    '%s: the incident names its place, with the rounded coordinates beside it',
    async (_provider, vin, place, at, date) => {
      expect(await incidentsOf(vin)).toEqual([
        {
          date,
          type: 'collision',
          severity: 'high',
          location: place,
          coordinates: at,
          airbag_deployment: false,
        },
      ]);
    },
  );

  it('the PDF prints the place name', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/v1/history/report',
      headers: { authorization: `Bearer ${fleet.key}` },
      payload: { vin: vins.traccar, tier: 'lifetime', format: 'pdf' },
    });
    expect(response.statusCode).toBe(200);
    const file = join(dir, 'report.pdf');
    writeFileSync(file, response.rawPayload);
    expect(execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' })).toMatch(
      /Collision\s+\S+\s+Austin, Texas, US\s+No/,
    );
  });
});

describe('instant verification address', () => {
  it.each([
    ['generic', vins.generic, 41.85003, -87.65005, 'Chicago, Illinois, US'],
    ['Traccar', vins.traccar, 30.2672, -97.7431, 'Austin, Texas, US'],
    ['Geotab', vins.geotab, 43.4561, -79.6801, 'Oakville, Ontario, CA'],
    ['Smartcar', vins.smartcar, 51.5014, -0.1419, 'City of Westminster, England, GB'],
  ])('%s sends no address: the nearest place is the address', async (_provider, vin, latitude, longitude, address) => {
    expect(await locationOf(vin)).toMatchObject({ latitude, longitude, address, address_source: 'nearest_place' });
  });

  it("Samsara's own reverse geocoding is kept as the provider's address", async () => {
    expect(await locationOf(vins.samsara)).toMatchObject({
      latitude: 37.7929,
      longitude: -122.4177,
      address: 'Hyde Street, San Francisco, CA',
      address_source: 'provider',
    });
  });
});
