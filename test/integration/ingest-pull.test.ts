import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPullDeps, pullFeed, type PullDeps } from '../../src/ingest/pulls.js';
import { createLogger } from '../../src/log.js';
import { createMetrics } from '../../src/metrics.js';
import { projectRoot } from '../../src/paths.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { startFakeProvider, type FakeAnswer, type FakeProvider } from '../helpers/fake-provider.js';
import { createConnection, settle } from '../helpers/ingest.js';

let t: TestApp;
let samsaraApi: FakeProvider;
let acme: { id: string; key: string };
let deps: PullDeps;

const samsaraVehicle = '281474977075805';
const feedPage = (endCursor: string, hasNextPage: boolean, odometerMeters: number, time: string) => ({
  data: [
    {
      id: samsaraVehicle,
      name: 'Truck 12',
      obdOdometerMeters: [{ time, value: odometerMeters }],
      fuelPercents: [{ time, value: 62 }],
    },
  ],
  pagination: { endCursor, hasNextPage },
});

beforeAll(async () => {
  t = await createTestApp({ WEBHOOK_ALLOW_NETS: '127.0.0.1/32' });
  samsaraApi = await startFakeProvider();
  acme = await t.createCompany();
  deps = createPullDeps({
    config: t.config,
    pool: t.pool,
    queues: t.queues,
    log: createLogger('silent'),
    metrics: createMetrics('pull-test'),
    now: () => new Date(),
  });
  await t.startWorkers(['ingest', 'health']);
});
afterAll(async () => {
  await t.close();
  await samsaraApi.close();
});

async function cursorOf(connectionId: string) {
  const { rows } = await t.pool.query(
    `SELECT pull_cursor, last_pull_error, next_pull_at FROM provider_connections WHERE id = $1`,
    [connectionId],
  );
  return rows[0];
}

const distance = 'obdOdometerMeters,gpsOdometerMeters,fuelPercents';
const fixture = (provider: string, file: string) =>
  readFileSync(join(projectRoot, 'test/fixtures/providers', provider, file), 'utf8');

/**
 * Samsara's other feeds for the tests below: motion and engine stats from the fixtures, the
 * safety events, and `distance` answered by `distancePage`.
 */
function answerSamsara(distancePage: (after: string | null) => FakeAnswer) {
  samsaraApi.on('GET /fleet/vehicles/stats/feed', (request) => {
    const types = request.query.get('types');
    if (types === distance) return distancePage(request.query.get('after'));
    return { body: fixture('samsara', types?.startsWith('gps') ? 'feed.json' : 'feed-engine.json') };
  });
  samsaraApi.on('GET /fleet/safety-events', { body: fixture('samsara', 'safety-events.json') });
}

const feedRequests = (since = 0) =>
  samsaraApi.requests.slice(since).filter((r) => r.path === '/fleet/vehicles/stats/feed');
const distanceRequests = (since = 0) => feedRequests(since).filter((r) => r.query.get('types') === distance);

describe('Samsara feed pulls', () => {
  it('pulls every feed page by page into the inbox, each with its own cursor; the vehicle gets all of it', async () => {
    answerSamsara((after) => {
      if (!after) return { body: feedPage('c1', true, 184_023_117, '2026-11-20T10:00:00Z') };
      if (after === 'c1') return { body: feedPage('c2', false, 184_030_000, '2026-11-20T10:05:00Z') };
      return { body: { data: [], pagination: { endCursor: 'c2', hasNextPage: false } } };
    });
    const connection = await createConnection(t, acme.id, 'samsara', {
      api_token: 'samsara-token',
      base_url: samsaraApi.url,
    });
    const truck = await t.createVehicle(acme.id, {
      provider_connection_id: connection.id,
      provider_vehicle_id: samsaraVehicle,
    });

    const result = await pullFeed(deps, connection.id);
    // distance (2 pages), motion, engine, safety events
    expect(result).toMatchObject({ pages: 5, outcome: 'done' });
    expect(distanceRequests().map((r) => r.query.get('after'))).toEqual([null, 'c1']);
    expect(feedRequests().map((r) => r.query.get('types'))).toEqual([
      distance,
      distance,
      'gps,engineStates,batteryMilliVolts',
      'engineCoolantTemperatureMilliC,faultCodes,obdEngineSeconds',
    ]);
    expect(samsaraApi.requests.every((r) => r.headers.authorization === 'Bearer samsara-token')).toBe(true);
    expect(JSON.parse((await cursorOf(connection.id)).pull_cursor)).toMatchObject({
      feed: 0,
      cursors: { distance: 'c2', motion: 'aGlqa2xtbm9w', engine: 'ZW5naW5lLTE=' },
    });

    await settle(t);
    const vehicle = (await t.api('GET', `/vehicles/${truck.id}`, acme.key)).json().data;
    expect(vehicle.signals.odometer).toEqual({
      km: 184_030,
      miles: 114_350.94,
      as_of: '2026-11-20T10:05:00.000Z',
      source: 'samsara',
    });
    expect(vehicle.signals.fuel_percent).toBe(62);
    const { rows } = await t.pool.query(
      `SELECT jsonb_object_keys(signals -> 'observed_at') AS signal FROM vehicles WHERE id = $1`,
      [truck.id],
    );
    expect(rows.map((r) => r.signal)).toEqual(
      expect.arrayContaining([
        'battery_voltage',
        'check_engine_light',
        'coolant_temp_c',
        'dtcs',
        'engine_hours',
        'engine_state',
        'location',
        'speed_kph',
      ]),
    );
    const events = await t.pool.query(`SELECT kind FROM vehicle_events WHERE vehicle_id = $1 ORDER BY recorded_at`, [
      truck.id,
    ]);
    expect(events.rows.map((r) => r.kind)).toEqual(['hard_accel', 'hard_brake']);

    const before = samsaraApi.requests.length;
    await pullFeed(deps, connection.id);
    expect(distanceRequests(before).map((r) => r.query.get('after'))).toEqual(['c2']);
  });

  it('two pulls of one feed at once: one asks the provider, the other waits', async () => {
    answerSamsara(() => ({ body: feedPage('p1', false, 1_000_000, '2026-11-20T09:00:00Z') }));
    const connection = await createConnection(t, acme.id, 'samsara', {
      api_token: 'samsara-token',
      base_url: samsaraApi.url,
    });
    const before = samsaraApi.requests.length;
    const outcomes = await Promise.all([pullFeed(deps, connection.id), pullFeed(deps, connection.id)]);
    expect(outcomes.map((o) => o.outcome).sort()).toEqual(['done', 'waiting']);
    // One request per feed, from the one pull that holds the claim.
    expect(samsaraApi.requests.length - before).toBe(4);
    // The claim ends with the stored page: the feed is due again on the next schedule.
    const state = await cursorOf(connection.id);
    expect(state.next_pull_at).toBeNull();
    expect(JSON.parse(state.pull_cursor).cursors.distance).toBe('p1');
  });

  it('keeps the cursor where it was when storing a page fails, and resumes from it', async () => {
    const connection = await createConnection(t, acme.id, 'samsara', {
      api_token: 'samsara-token',
      base_url: samsaraApi.url,
    });
    answerSamsara((after) =>
      after === 'k1'
        ? { body: feedPage('k2', false, 1_000_000, '2026-11-20T11:00:00Z') }
        : { body: feedPage('k1', true, 999_000, '2026-11-20T10:55:00Z') },
    );
    // The second page cannot be stored (a database failure mid-pull).
    await t.pool.query(`CREATE FUNCTION refuse_k2() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.payload LIKE '%"k2"%' THEN RAISE EXCEPTION 'disk full'; END IF; RETURN NEW; END $$`);
    await t.pool.query(
      `CREATE TRIGGER refuse_k2 BEFORE INSERT ON ingest_inbox FOR EACH ROW EXECUTE FUNCTION refuse_k2()`,
    );
    await expect(pullFeed(deps, connection.id)).rejects.toThrow('disk full');
    expect(JSON.parse((await cursorOf(connection.id)).pull_cursor)).toEqual({ feed: 0, cursors: { distance: 'k1' } });
    await t.pool.query(`DROP TRIGGER refuse_k2 ON ingest_inbox; DROP FUNCTION refuse_k2()`);

    const before = samsaraApi.requests.length;
    expect(await pullFeed(deps, connection.id)).toMatchObject({ pages: 4, outcome: 'done' });
    expect(distanceRequests(before).map((r) => r.query.get('after'))).toEqual(['k1']);
    expect(JSON.parse((await cursorOf(connection.id)).pull_cursor).cursors.distance).toBe('k2');
  });

  it('honours 429 Retry-After: no request until it has passed, cursor unchanged', async () => {
    let clock = new Date('2026-11-22T12:00:00Z');
    const clocked = { ...deps, now: () => clock };
    const connection = await createConnection(t, acme.id, 'samsara', {
      api_token: 'samsara-token',
      base_url: samsaraApi.url,
    });
    let limited = true;
    answerSamsara(() =>
      limited
        ? { status: 429, headers: { 'retry-after': '2.5' }, body: { message: 'rate limited' } }
        : { body: feedPage('r1', false, 5_000, '2026-11-22T11:59:00Z') },
    );
    expect(await pullFeed(clocked, connection.id)).toMatchObject({ outcome: 'rate_limited', pages: 0 });
    const state = await cursorOf(connection.id);
    expect(state.pull_cursor).toBeNull();
    expect(state.next_pull_at).toEqual(new Date('2026-11-22T12:00:02.500Z'));
    expect(state.last_pull_error).toBe('rate limited; retrying after 2500 ms');

    limited = false;
    const before = samsaraApi.requests.length;
    clock = new Date('2026-11-22T12:00:02Z');
    expect(await pullFeed(clocked, connection.id)).toMatchObject({ outcome: 'waiting' });
    expect(samsaraApi.requests.length).toBe(before);
    clock = new Date('2026-11-22T12:00:03Z');
    expect(await pullFeed(clocked, connection.id)).toMatchObject({ outcome: 'done', pages: 4 });
    expect(await cursorOf(connection.id)).toMatchObject({ last_pull_error: null, next_pull_at: null });
    expect(JSON.parse((await cursorOf(connection.id)).pull_cursor).cursors.distance).toBe('r1');
  });

  it('a failing provider records the error and backs off a minute', async () => {
    const connection = await createConnection(t, acme.id, 'samsara', {
      api_token: 'samsara-token',
      base_url: samsaraApi.url,
    });
    samsaraApi.on('GET /fleet/vehicles/stats/feed', { status: 503, body: { message: 'maintenance' } });
    const now = new Date('2026-11-22T13:00:00Z');
    expect(await pullFeed({ ...deps, now: () => now }, connection.id)).toMatchObject({ outcome: 'failed' });
    const state = await cursorOf(connection.id);
    expect(state.last_pull_error).toMatch(/^HTTP 503 from 127\.0\.0\.1:\d+/);
    expect(state.next_pull_at).toEqual(new Date('2026-11-22T13:01:00Z'));
  });

  it('every active pulled connection gets a scheduler, and a deactivated one loses it', async () => {
    const connection = await createConnection(
      t,
      acme.id,
      'samsara',
      { api_token: 'samsara-token', base_url: samsaraApi.url },
      { pull_interval_seconds: 30 },
    );
    const schedulers = async () => (await t.queues.queue('pull').getJobSchedulers()).map((s) => [s.key, s.every]);
    expect(await schedulers()).toContainEqual([`pull-${connection.id}`, 30_000]);
    await t.admin('DELETE', `/provider-connections/${connection.id}`);
    expect((await schedulers()).map(([key]) => key)).not.toContain(`pull-${connection.id}`);
  });
});
