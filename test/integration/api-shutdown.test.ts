/**
 * Graceful shutdown of a real API process (`node dist/server/main.js api`, SIGTERM) while a dry
 * run computes on its CPU pool: the request answers 503 SERVICE_UNAVAILABLE with Retry-After at
 * once, rather than holding the shutdown for up to CPU_TASK_BUDGET_MS (longer than the app's 10 s
 * wait for running requests), and the process exits cleanly.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { v1 } from '../helpers/monitoring.js';
import { ProcessGroup, serviceEnv, type ServiceProcess } from '../helpers/processes.js';

const processes = new ProcessGroup();
let t: TestApp;
let api: ServiceProcess;

beforeAll(async () => {
  t = await createTestApp({ WEBHOOK_ALLOW_NETS: '127.0.0.1/32' });
  // A budget no replay here comes near: only the shutdown can end the dry run early.
  api = await processes.start(['api'], serviceEnv(t, { CPU_TASK_BUDGET_MS: '120000' }));
}, 90_000);
afterAll(async () => {
  await processes.killAll();
  await t.close();
});

describe('shutdown of the API process', () => {
  it('answers a dry run still computing with 503 and Retry-After, and exits 0', async () => {
    const acme = await t.createCompany('Acme Fleet');
    const vehicle = (await t.createVehicle(acme.id)).id as string;
    const subscribed = await v1(t, 'POST', '/runs/subscribe', acme.key, {
      vehicle_id: vehicle,
      webhook_url: 'http://127.0.0.1:9/hook',
      tier: 'premium',
      events: ['speed_limit_exceeded', 'excessive_idling', 'geo_fence_entry', 'geo_fence_exit'],
      options: { geofence_ids: [] },
    });
    expect(subscribed.statusCode, subscribed.body).toBe(201);
    // 100,000 fixes (MONITORING_DRY_RUN_MAX_READINGS) over three days: seconds of reading and replay.
    const start = Date.now() - 3 * 86_400_000;
    await t.pool.query(`UPDATE vehicle_ownerships SET started_at = $2 WHERE vehicle_id = $1`, [
      vehicle,
      new Date(start - 86_400_000),
    ]);
    await t.pool.query(
      `INSERT INTO readings (vehicle_id, signal, recorded_at, value_json, source)
       SELECT $1, 'location', to_timestamp(($2::float8 + i * 2500) / 1000.0),
              jsonb_build_object('lat', 52 + (i % 997) * 1e-4, 'lon', 13 + i * 1e-6, 'heading', 0), 'generic'
       FROM generate_series(0, 99999) AS i`,
      [vehicle, start],
    );

    const dryRun = fetch(`${api.url}/v1/subscriptions/${subscribed.json().data.id}/dry-run`, {
      method: 'POST',
      headers: { authorization: `Bearer ${acme.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ since: new Date(start - 60_000).toISOString() }),
    });
    // In flight: the window is being read or replayed (seconds, left alone: a 200).
    await new Promise((resolve) => setTimeout(resolve, 500));
    const exitCode = api.stop();
    const response = await dryRun;
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('1');
    expect(await response.json()).toMatchObject({
      success: false,
      error: { code: 'SERVICE_UNAVAILABLE', message: 'the service is shutting down; retry' },
    });
    expect(await exitCode).toBe(0);
  }, 60_000);
});
