/**
 * The paid calls under load (docs/performance.md, issue 10): history reports/s and verifications/s at 20
 * connections with p99, beside the API's by-id route in the same run, and the single-report
 * latency for a vehicle with a year of readings (about 106,000, seeded through the ingest
 * statements so the rollups are what ingest would have left). Every measured call is billed, as
 * in production. Targets: a basic report < 300 ms, its PDF < 1 s.
 */
import { checkVin } from '../src/domain/vin.js';
import type { Pool } from '../src/db/pool.js';
import { seedDrivingDays } from '../test/helpers/history-seed.js';
import {
  createBenchCompany,
  freshDatabase,
  load,
  printTable,
  startService,
  type LoadResult,
  type Service,
} from './support.js';

const vehicleCount = 1000;
const connections = 20;
const durationSeconds = 10;
const singleRuns = 30;

/** A VIN with a valid check digit: the one of 0–9 and X that checkVin accepts. */
function validVin(serial: number): string {
  for (const check of '0123456789X') {
    const vin = `1FTFW1E5${check}PK${String(serial).padStart(6, '0')}`;
    if (checkVin(vin).ok) return vin;
  }
  throw new Error(`no check digit for serial ${serial}`);
}

async function seed(
  pool: Pool,
): Promise<{ key: string; ids: string[]; vins: string[]; yearVin: string; readings: number }> {
  const { companyId, key } = await createBenchCompany(pool, 'Bench Fleet');
  const vins = Array.from({ length: vehicleCount }, (_, i) => validVin(i + 1));
  const { rows } = await pool.query<{ id: string }>(
    `INSERT INTO vehicles (company_id, name, vin, make, model, year, telematics_provider, provider_vehicle_id,
                           signals, health, link_broken, as_of, ecu_odometer_at)
     SELECT $1, 'Truck ' || i, vin, 'Ford', 'F-150', 2023, 'samsara', 'sam-' || i,
            jsonb_build_object(
              'odometer', jsonb_build_object('km', 100000 + i * 13.7, 'as_of', now() - interval '5 minutes', 'source', 'samsara'),
              'fuel_percent', 20 + i % 80, 'battery_voltage', 12.2 + (i % 20) / 10.0, 'coolant_temp_c', 85 + i % 10,
              'location', jsonb_build_object('lat', 41.85 + i / 10000.0, 'lon', -87.65, 'heading', i % 360, 'as_of', now()),
              'tire_pressure_kpa', jsonb_build_object('front_left', 240, 'front_right', 238, 'rear_left', 241, 'rear_right', 239),
              'dtcs', jsonb_build_array(jsonb_build_object('code', 'P0420', 'system', 'powertrain', 'mil', false)),
              'check_engine_light', false, 'engine_hours', 4000 + i),
            jsonb_build_object('status', 'ok', 'alerts', jsonb_build_array()),
            null, now(), now() - interval '5 minutes'
     FROM unnest($2::text[]) WITH ORDINALITY AS v(vin, i)
     RETURNING id`,
    [companyId, vins],
  );
  const ids = rows.map((r) => r.id);
  // The first vehicle drove every day of the last year; its ownership span starts before that.
  await pool.query(`UPDATE vehicle_ownerships SET started_at = now() - interval '400 days' WHERE vehicle_id = $1`, [
    ids[0],
  ]);
  const readings = await seedDrivingDays(pool, ids[0]!, { end: new Date(), days: 365, source: 'samsara' });
  return { key, ids, vins, yearVin: vins[0]!, readings };
}

/** Sequential latency of one call, after a warm-up: median, p99 (of `singleRuns`) and max, in ms. */
async function single(
  url: string,
  init: RequestInit,
): Promise<{ medianMs: number; p99Ms: number; maxMs: number; bytes: number }> {
  let bytes = 0;
  for (let i = 0; i < 3; i++) await (await fetch(url, init)).arrayBuffer();
  const times: number[] = [];
  for (let i = 0; i < singleRuns; i++) {
    const started = performance.now();
    const response = await fetch(url, init);
    bytes = (await response.arrayBuffer()).byteLength;
    if (!response.ok) throw new Error(`${url} answered ${response.status}`);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => Math.round(times[Math.min(times.length - 1, Math.floor(q * times.length))]! * 10) / 10;
  return { medianMs: at(0.5), p99Ms: at(0.99), maxMs: at(1), bytes };
}

export async function benchReports(): Promise<Record<string, unknown>> {
  const { url: databaseUrl, pool } = await freshDatabase('reports');
  const seedStarted = performance.now();
  const { key, ids, vins, yearVin, readings } = await seed(pool);
  const seedSeconds = Math.round((performance.now() - seedStarted) / 100) / 10;
  await pool.end();
  console.log(`seeded ${vehicleCount} vehicles and ${readings} readings (a year of one vehicle) in ${seedSeconds}s`);

  const services: Service[] = [];
  try {
    const api = await startService(
      'server/main.js',
      ['api'],
      { DATABASE_URL: databaseUrl, RATE_LIMIT_PER_MINUTE: '10000000', ADMIN_TOKEN: '', DATABASE_POOL_SIZE: '10' },
      3903,
      '/readyz',
    );
    services.push(api);
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const post = (path: string, body: unknown) => ({
      method: 'POST' as const,
      headers,
      body: JSON.stringify(body),
      path,
    });
    const common = { url: api.url, connections, duration: durationSeconds, pipelining: 1 };

    const reportBody = { vin: yearVin, tier: 'basic' };
    await load({ ...common, duration: 2, requests: [post('/v1/instant/verify', { vin: vins[1] })] });
    await load({ ...common, duration: 2, requests: [post('/v1/history/report', reportBody)] });

    const results: Record<string, LoadResult> = {};
    let nextId = 0;
    results['GET /api/v1/vehicles/:id'] = await load({
      ...common,
      requests: [
        {
          method: 'GET',
          headers,
          setupRequest: (r) => ({ ...r, path: `/api/v1/vehicles/${ids[nextId++ % ids.length]}` }),
        },
      ],
    });
    let nextVin = 0;
    results['verify basic'] = await load({
      ...common,
      requests: [
        {
          ...post('/v1/instant/verify', {}),
          setupRequest: (r) => ({ ...r, body: JSON.stringify({ vin: vins[nextVin++ % vins.length] }) }),
        },
      ],
    });
    results['verify premium'] = await load({
      ...common,
      requests: [
        {
          ...post('/v1/instant/verify', {}),
          setupRequest: (r) => ({
            ...r,
            body: JSON.stringify({ vin: vins[nextVin++ % vins.length], level: 'premium' }),
          }),
        },
      ],
    });
    results['report basic JSON (year of data)'] = await load({
      ...common,
      requests: [post('/v1/history/report', reportBody)],
    });
    results['report lifetime PDF (year of data)'] = await load({
      ...common,
      // Each PDF takes a few hundred ms of CPU, so 20 queued ones outlast autocannon's 10 s default.
      timeout: 60,
      requests: [post('/v1/history/report', { vin: yearVin, tier: 'lifetime', format: 'pdf' })],
    });

    const byId = results['GET /api/v1/vehicles/:id']!.requestsPerSecond;
    printTable(
      `Paid calls, ${connections} connections, ${durationSeconds}s each (every call billed)`,
      Object.entries(results).map(([name, r]) => ({
        route: name,
        'req/s': r.requestsPerSecond,
        'p50 ms': r.p50Ms,
        'p99 ms': r.p99Ms,
        'ratio to by-id': (r.requestsPerSecond / byId).toFixed(3),
        'non-2xx': r.non2xx,
        errors: r.errors,
      })),
    );

    const init = (body: unknown): RequestInit => ({ method: 'POST', headers, body: JSON.stringify(body) });
    const latency = {
      'report basic JSON': await single(`${api.url}/v1/history/report`, init(reportBody)),
      'report lifetime JSON': await single(`${api.url}/v1/history/report`, init({ vin: yearVin, tier: 'lifetime' })),
      'report basic PDF': await single(`${api.url}/v1/history/report`, init({ ...reportBody, format: 'pdf' })),
      'report lifetime PDF': await single(
        `${api.url}/v1/history/report`,
        init({ vin: yearVin, tier: 'lifetime', format: 'pdf' }),
      ),
      'verify premium': await single(`${api.url}/v1/instant/verify`, init({ vin: vins[2], level: 'premium' })),
    };
    printTable(
      `Single-call latency, one at a time (${singleRuns} runs), vehicle with ${readings} readings over a year`,
      Object.entries(latency).map(([name, l]) => ({
        call: name,
        'median ms': l.medianMs,
        'p99 ms': l.p99Ms,
        'max ms': l.maxMs,
        bytes: l.bytes,
      })),
    );
    const jsonMet = latency['report basic JSON'].p99Ms < 300;
    const pdfMet = latency['report lifetime PDF'].p99Ms < 1000;
    const verdict = jsonMet && pdfMet ? 'met' : 'missed';
    console.log(`target (basic report p99 < 300 ms, PDF p99 < 1 s, one at a time): ${verdict}`);
    return { connections, durationSeconds, vehicleCount, readings, seedSeconds, results, latency, target: verdict };
  } finally {
    await Promise.all(services.map((service) => service.stop()));
  }
}
