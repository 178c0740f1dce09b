/**
 * Bounded geofence and dry-run work (issue 16), on real Postgres and Redis:
 * - large jagged fences (2,000 vertices, holes) give, live (ingest → health worker) and in the dry
 *   run (on the CPU pool's threads), exactly the entries and exits that testing every edge gives;
 * - the per-company vertex cap answers 409 naming the limit, and holds under concurrent creates;
 * - a dry run past its time budget, or past its geofence-test budget, answers 422
 *   WORK_BUDGET_EXCEEDED naming the limit, and `/healthz` keeps answering while it computes;
 * - a report PDF past the time budget answers 422 and is not billed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GeofenceArea } from '../../src/domain/geo.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createConnection, pushGeneric, settle } from '../helpers/ingest.js';
import { v1 } from '../helpers/monitoring.js';

type Ring = Array<[number, number]>;
type Polygon = GeofenceArea & { type: 'Polygon' };
interface Fix {
  lat: number;
  lon: number;
  atMs: number;
}

let seed = 16;
const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;

/** A closed star-shaped ring of `corners` corners around (lon, lat), jagged so edges are many and close. */
function star(lon: number, lat: number, radius: number, corners: number, clockwise = false): Ring {
  const ring: Ring = Array.from({ length: corners }, (_, i) => {
    const angle = ((clockwise ? corners - i : i) / corners) * 2 * Math.PI;
    const r = radius * (0.6 + 0.4 * random());
    return [lon + r * Math.cos(angle), lat + r * Math.sin(angle)];
  });
  return [...ring, ring[0]!];
}

/** Even-odd over every edge of every ring: the definition, without any index. */
function bruteContains(area: Polygon, p: { lat: number; lon: number }): boolean {
  let inside = false;
  for (const ring of area.coordinates) {
    for (let i = 1; i < ring.length; i++) {
      const [xi, yi] = ring[i]!;
      const [xj, yj] = ring[i - 1]!;
      if (yi > p.lat !== yj > p.lat && p.lon < ((xj - xi) * (p.lat - yi)) / (yj - yi) + xi) inside = !inside;
    }
  }
  return inside;
}

const turn = (ax: number, ay: number, bx: number, by: number, cx: number, cy: number) =>
  (bx - ax) * (cy - ay) - (by - ay) * (cx - ax);

/** Whether the segment a → b crosses an edge (random coordinates never touch exactly). */
function bruteCrossed(area: Polygon, a: Fix, b: Fix): boolean {
  return area.coordinates.some((ring) =>
    ring.some(([x1, y1], i) => {
      if (i === 0) return false;
      const [x0, y0] = ring[i - 1]!;
      return (
        turn(x0, y0, x1, y1, a.lon, a.lat) * turn(x0, y0, x1, y1, b.lon, b.lat) < 0 &&
        turn(a.lon, a.lat, b.lon, b.lat, x0, y0) * turn(a.lon, a.lat, b.lon, b.lat, x1, y1) < 0
      );
    }),
  );
}

/**
 * The entries and exits of docs/monitoring.md "Geofences" computed by brute force, as
 * "<ms> <kind> <fence name>": per fix, the fences containing it against those of the previous
 * fix; both outside with the segment between crossing the fence is an entry and an exit.
 */
function expectedEdges(fences: Array<{ name: string; area: Polygon }>, fixes: Fix[]): string[] {
  const edges: string[] = [];
  let previous: { fix: Fix; inside: boolean[] } | null = null;
  for (const fix of fixes) {
    const inside = fences.map((f) => bruteContains(f.area, fix));
    if (previous) {
      for (const [i, f] of fences.entries()) {
        const [was, is] = [previous.inside[i], inside[i]];
        if (!was && is) edges.push(`${fix.atMs} geo_fence_entry ${f.name}`);
        else if (was && !is) edges.push(`${fix.atMs} geo_fence_exit ${f.name}`);
        else if (!was && !is && bruteCrossed(f.area, previous.fix, fix)) {
          edges.push(`${fix.atMs} geo_fence_entry ${f.name}`, `${fix.atMs} geo_fence_exit ${f.name}`);
        }
      }
    }
    previous = { fix, inside };
  }
  return edges.sort();
}

/**
 * Location readings of `vehicleId`, written as ingest writes them; the vehicle's ownership span is
 * moved back before them (a company sees only what its vehicle recorded while it owned it).
 */
async function insertFixes(t: TestApp, vehicleId: string, fixes: Fix[]): Promise<void> {
  await t.pool.query(`UPDATE vehicle_ownerships SET started_at = $2 WHERE vehicle_id = $1 AND ended_at IS NULL`, [
    vehicleId,
    new Date(fixes.reduce((min, f) => Math.min(min, f.atMs), Infinity) - 86_400_000),
  ]);
  await t.pool.query(
    `INSERT INTO readings (vehicle_id, signal, recorded_at, value_json, source)
     SELECT $1, 'location', to_timestamp(at / 1000.0), jsonb_build_object('lat', lat, 'lon', lon, 'heading', 0), 'generic'
     FROM unnest($2::float8[], $3::float8[], $4::float8[]) AS p(at, lat, lon)`,
    [vehicleId, fixes.map((f) => f.atMs), fixes.map((f) => f.lat), fixes.map((f) => f.lon)],
  );
}

async function subscribe(t: TestApp, key: string, vehicleId: string, body: Record<string, unknown>) {
  const response = await v1(t, 'POST', '/runs/subscribe', key, {
    vehicle_id: vehicleId,
    webhook_url: 'http://127.0.0.1:9/hook',
    tier: 'premium',
    ...body,
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json().data.id as string;
}

const square = (lon: number, lat: number, size: number): Ring => [
  [lon, lat],
  [lon + size, lat],
  [lon + size, lat + size],
  [lon, lat + size],
  [lon, lat],
];

describe('large fences, live and in the dry run', () => {
  /** Readings start after the subscription exists (detectors read nothing older than it). */
  const t0 = Date.now() + 60_000;
  let clock = new Date(t0);
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp(
      { WEBHOOK_ALLOW_NETS: '127.0.0.1/32', GEOFENCE_VERTICES_PER_COMPANY: '30000' },
      () => clock,
    );
    await t.startWorkers(['ingest', 'health'], () => clock);
  });
  afterAll(() => t.close());

  it('give exactly the entries and exits that testing every edge gives', async () => {
    const acme = await t.createCompany('Acme Fleet');
    const fences: Array<{ name: string; area: Polygon }> = [];
    for (let i = 0; i < 12; i++) {
      const [lon, lat, radius] = [13 + 0.05 + random() * 0.1, 52 + 0.05 + random() * 0.1, 0.01 + random() * 0.03];
      // Every third fence has a hole; each has 2,000 positions, the most one may have.
      const rings = i % 3 === 0 ? [star(lon, lat, radius, 1599), star(lon, lat, radius * 0.35, 399, true)] : [];
      const area: Polygon = { type: 'Polygon', coordinates: rings.length ? rings : [star(lon, lat, radius, 1999)] };
      const name = `Fence ${i}`;
      const response = await v1(t, 'POST', '/geofences', acme.key, { name, area });
      expect(response.statusCode, response.body).toBe(201);
      fences.push({ name, area });
    }
    const created = await createConnection(t, acme.id, 'generic');
    const vehicle = await t.createVehicle(acme.id, { provider_connection_id: created.id, provider_vehicle_id: 'v1' });
    const subscription = await subscribe(t, acme.key, vehicle.id, { events: ['geo_fence_entry', 'geo_fence_exit'] });

    // A drive wandering over the fences: a fix every 10 s, about 150 m apart.
    const fixes: Fix[] = [];
    let [lat, lon, heading] = [52.1, 13.1, 0];
    for (let i = 0; i < 600; i++) {
      heading += (random() - 0.5) * 1.2;
      lat += 0.0015 * Math.sin(heading);
      lon += 0.0015 * Math.cos(heading);
      if (lat < 52.02 || lat > 52.18 || lon < 13.02 || lon > 13.18) heading += Math.PI;
      fixes.push({ lat, lon, atMs: t0 + i * 10_000 });
    }
    const expected = expectedEdges(fences, fixes);
    // Not a vacuous comparison: the drive enters, leaves and passes through fences many times.
    expect(expected.length).toBeGreaterThan(40);
    expect(expected.some((e, i) => e.includes('entry') && expected[i + 1] === e.replace('entry', 'exit'))).toBe(true);

    for (let i = 0; i < fixes.length; i += 100) {
      const batch = fixes.slice(i, i + 100);
      clock = new Date(batch.at(-1)!.atMs + 1000);
      const response = await pushGeneric(t, 'generic', created.id, created.generated_secret!, {
        readings: batch.map((f) => ({
          vehicle: 'v1',
          ts: new Date(f.atMs).toISOString(),
          signals: { location: { lat: f.lat, lon: f.lon, heading: 0 } },
        })),
      });
      expect(response.statusCode, response.body).toBe(202);
      await settle(t);
    }
    const names = new Map(
      (await t.pool.query<{ id: string; name: string }>(`SELECT id, name FROM geofences`)).rows.map((r) => [
        r.id,
        r.name,
      ]),
    );
    const live = await t.pool.query<{ kind: string; key: string; at: Date }>(
      `SELECT kind, episode_key AS key, occurred_at AS at FROM monitoring_events WHERE subscription_id = $1`,
      [subscription],
    );
    expect(live.rows.map((e) => `${e.at.getTime()} ${e.kind} ${names.get(e.key)}`).sort()).toEqual(expected);

    const dryRun = await v1(t, 'POST', `/subscriptions/${subscription}/dry-run`, acme.key, {
      since: new Date(t0 - 60_000).toISOString(),
    });
    expect(dryRun.statusCode, dryRun.body).toBe(200);
    const replayed = (
      dryRun.json().data.events as Array<{ event: string; occurred_at: string; details: { description: string } }>
    ).map((e) => `${Date.parse(e.occurred_at)} ${e.event} ${/"(.*)"/.exec(e.details.description)![1]}`);
    expect(replayed.sort()).toEqual(expected);
  }, 120_000);

  it('the vertices of all live fences of a company are capped, under concurrent creates too', async () => {
    const capped = await t.createCompany('Many Fences');
    const create = (area: GeofenceArea) => v1(t, 'POST', '/geofences', capped.key, { name: 'Fence', area });
    // 20 fences of 2,000 positions sent at once against a cap of 30,000: exactly 15 fit.
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        create({ type: 'Polygon', coordinates: [star(13 + i * 0.1, 52, 0.01, 1999)] }),
      ),
    );
    expect(answers.filter((a) => a.statusCode === 201)).toHaveLength(15);
    const refused = answers.filter((a) => a.statusCode !== 201);
    expect(refused).toHaveLength(5);
    for (const answer of refused) {
      expect(answer.statusCode).toBe(409);
      expect(answer.json().error).toMatchObject({
        code: 'LIMIT_REACHED',
        message: expect.stringContaining('GEOFENCE_VERTICES_PER_COMPANY'),
        details: { resource: 'geofence_vertices', limit: 30_000, used: 30_000, requested: 2000 },
      });
    }
    const stored = await t.pool.query<{ n: number }>(
      `SELECT sum(vertex_count)::int AS n FROM geofences WHERE company_id = $1 AND deleted_at IS NULL`,
      [capped.id],
    );
    expect(stored.rows[0]!.n).toBe(30_000);
    // Even a circle (1 vertex) is over; deleting a fence makes room for another.
    const circle = await create({ type: 'Circle', center: { lat: 52, lon: 13 }, radius_m: 100 });
    expect(circle.statusCode).toBe(409);
    const id = answers.find((a) => a.statusCode === 201)!.json().data.id as string;
    expect((await v1(t, 'DELETE', `/geofences/${id}`, capped.key)).statusCode).toBe(200);
    expect((await create({ type: 'Polygon', coordinates: [square(13, 52, 0.01)] })).statusCode).toBe(201);
    expect((await create({ type: 'Circle', center: { lat: 52, lon: 13 }, radius_m: 100 })).statusCode).toBe(201);
  });
});

describe('budgets', () => {
  let t: TestApp;
  let acme: { id: string; key: string };
  const now = Date.now();

  beforeAll(async () => {
    t = await createTestApp({
      WEBHOOK_ALLOW_NETS: '127.0.0.1/32',
      CPU_TASK_BUDGET_MS: '500',
    });
    acme = await t.createCompany('Acme Fleet');
  });
  afterAll(() => t.close());

  it('a dry run past CPU_TASK_BUDGET_MS answers 422 naming it, and /healthz answers all the while', async () => {
    const vehicle = (await t.createVehicle(acme.id)).id as string;
    // Every kind, no fence: 80,000 fixes over three days keep a thread busy for seconds.
    const subscription = await subscribe(t, acme.key, vehicle, {
      events: ['speed_limit_exceeded', 'excessive_idling', 'geo_fence_entry', 'geo_fence_exit'],
      options: { geofence_ids: [] },
    });
    const start = now - 3 * 86_400_000;
    await insertFixes(
      t,
      vehicle,
      Array.from({ length: 80_000 }, (_, i) => ({
        lat: 52 + (i % 997) * 1e-4,
        lon: 13 + i * 1e-6,
        atMs: start + i * 3000,
      })),
    );
    let answered = false;
    const dryRun = v1(t, 'POST', `/subscriptions/${subscription}/dry-run`, acme.key, {
      since: new Date(start - 60_000).toISOString(),
    }).finally(() => (answered = true));
    // The event loop is free while the replay computes: health probes keep being answered.
    let probesWhileComputing = 0;
    while (!answered) {
      const probe = await t.app.inject({ method: 'GET', url: '/healthz' });
      expect(probe.statusCode).toBe(200);
      if (!answered) probesWhileComputing++;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const response = await dryRun;
    expect(response.statusCode, response.body).toBe(422);
    expect(response.json().error).toMatchObject({
      code: 'WORK_BUDGET_EXCEEDED',
      message: expect.stringContaining('CPU_TASK_BUDGET_MS'),
      details: { limit: 'CPU_TASK_BUDGET_MS', max: 500 },
    });
    expect(probesWhileComputing).toBeGreaterThan(3);
    // The pool replaced the stopped thread: the next task runs.
    const quiet = await subscribe(t, acme.key, vehicle, { events: ['speed_limit_exceeded'] });
    const later = await v1(t, 'POST', `/subscriptions/${quiet}/dry-run`, acme.key, {
      since: new Date(now - 60_000).toISOString(),
    });
    expect(later.statusCode, later.body).toBe(200);
  }, 60_000);
});

describe('fence-test budget', () => {
  let t: TestApp;
  let acme: { id: string; key: string };
  const now = Date.now();

  // The time budget stays at its default here: on a loaded machine, 500 ms could run out first.
  beforeAll(async () => {
    t = await createTestApp({ WEBHOOK_ALLOW_NETS: '127.0.0.1/32', MONITORING_DRY_RUN_MAX_FENCE_TESTS: '500' });
    acme = await t.createCompany('Acme Fleet');
  });
  afterAll(() => t.close());

  it('a dry run past MONITORING_DRY_RUN_MAX_FENCE_TESTS answers 422 naming it', async () => {
    const vehicle = (await t.createVehicle(acme.id)).id as string;
    const fence = await v1(t, 'POST', '/geofences', acme.key, {
      name: 'Jagged',
      area: { type: 'Polygon', coordinates: [star(13.1, 52.1, 0.05, 1999)] },
    });
    expect(fence.statusCode, fence.body).toBe(201);
    const subscription = await subscribe(t, acme.key, vehicle, {
      events: ['geo_fence_entry', 'geo_fence_exit'],
      options: { geofence_ids: [fence.json().data.id] },
    });
    // 400 fixes back and forth across the fence's jagged edge: each tests at least one edge per detector.
    await insertFixes(
      t,
      vehicle,
      Array.from({ length: 400 }, (_, i) => ({
        lat: 52.1,
        lon: 13.1 + (i % 2 ? 0.06 : 0.02),
        atMs: now - 600_000 + i * 1000,
      })),
    );
    const response = await v1(t, 'POST', `/subscriptions/${subscription}/dry-run`, acme.key, {
      since: new Date(now - 3_600_000).toISOString(),
    });
    expect(response.statusCode, response.body).toBe(422);
    expect(response.json().error).toMatchObject({
      code: 'WORK_BUDGET_EXCEEDED',
      message: expect.stringContaining('MONITORING_DRY_RUN_MAX_FENCE_TESTS'),
      details: { limit: 'MONITORING_DRY_RUN_MAX_FENCE_TESTS', max: 500 },
    });
  });
});

describe('report PDF budget', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ CPU_TASK_BUDGET_MS: '10' });
  });
  afterAll(() => t.close());

  it('a PDF that needs more than CPU_TASK_BUDGET_MS to render answers 422 naming it, unbilled; JSON still answers', async () => {
    const company = await t.createCompany('Acme Rentals');
    await t.createVehicle(company.id, { vin: '1HGCM82633A004352' });
    const report = (format: string) =>
      t.app.inject({
        method: 'POST',
        url: '/v1/history/report',
        headers: { authorization: `Bearer ${company.key}` },
        payload: { vin: '1HGCM82633A004352', tier: 'lifetime', format },
      });
    const pdf = await report('pdf');
    expect(pdf.statusCode, pdf.body).toBe(422);
    expect(pdf.headers['content-type']).toContain('application/json');
    expect(pdf.json().error).toMatchObject({
      code: 'WORK_BUDGET_EXCEEDED',
      message: expect.stringContaining('CPU_TASK_BUDGET_MS'),
      details: { limit: 'CPU_TASK_BUDGET_MS', max: 10 },
    });
    expect((await report('json')).statusCode).toBe(200);
    const billed = await t.pool.query<{ tier: string }>(
      `SELECT tier FROM usage_ledger WHERE company_id = $1 AND product = 'history_report'`,
      [company.id],
    );
    expect(billed.rows).toEqual([{ tier: 'lifetime' }]);
  });
});
