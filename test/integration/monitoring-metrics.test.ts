/**
 * The monitoring pipeline's Prometheus metrics (served on /metrics by every worker process):
 * events detected by kind, attempts by trigger and outcome, delivery outcomes and durations.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { createMetrics, type Metrics } from '../../src/metrics.js';
import { createRedis } from '../../src/queue/connection.js';
import { Queues } from '../../src/queue/queues.js';
import { startWorkers, type RunningWorkers } from '../../workers/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createConnection, pushGeneric, settle } from '../helpers/ingest.js';
import { v1 } from '../helpers/monitoring.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

let t: TestApp;
let receiver: Receiver;
let workers: RunningWorkers;
let queues: Queues;
const metrics: Metrics = createMetrics('monitoring-metrics-test');
const log = createLogger('silent');

beforeAll(async () => {
  t = await createTestApp({ WEBHOOK_ALLOW_NETS: '127.0.0.1/32', MONITORING_RETRY_DELAYS_MS: '200,200,200' });
  receiver = await startReceiver();
  const connection = createRedis(t.config, 'worker', log);
  queues = new Queues(connection, t.config.redisPrefix);
  workers = await startWorkers(
    { config: t.config, pool: t.pool, log, metrics, queues, now: () => new Date() },
    ['ingest', 'health', 'webhooks'],
    connection,
  );
});
afterAll(async () => {
  await workers.close();
  await queues.close();
  await t.close();
  await receiver.close();
});

async function sample(name: string, labels: Record<string, string>): Promise<number> {
  const metric = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name);
  const values = (metric?.values ?? []) as Array<{ labels: Record<string, string | number>; value: number }>;
  const found = values.find((v) => Object.entries(labels).every(([key, value]) => v.labels[key] === value));
  return found?.value ?? 0;
}

describe('monitoring metrics', () => {
  it('count events detected by kind, and attempts and deliveries by outcome', async () => {
    const acme = await t.createCompany();
    const created = await createConnection(t, acme.id, 'generic');
    const vehicle = await t.createVehicle(acme.id, { provider_connection_id: created.id, provider_vehicle_id: 'm-1' });
    receiver.answer('/metrics-hook', { status: 500 });
    const subscribed = await v1(t, 'POST', '/runs/subscribe', acme.key, {
      vehicle_id: vehicle.id,
      webhook_url: `${receiver.url}/metrics-hook`,
      tier: 'premium',
      events: ['hard_impact'],
    });
    expect(subscribed.statusCode, subscribed.body).toBe(201);
    const pushed = await pushGeneric(t, 'generic', created.id, created.generated_secret!, {
      readings: [
        {
          vehicle: 'm-1',
          ts: new Date(Date.now() + 5_000).toISOString(),
          signals: { events: [{ type: 'impact', g: 2 }] },
        },
      ],
    });
    expect(pushed.statusCode).toBe(202);
    await settle(t);
    await expect.poll(() => sample('monitoring_events_detected_total', { kind: 'hard_impact' })).toBe(1);
    await expect
      .poll(() => sample('monitoring_attempts_total', { trigger: 'scheduled', outcome: 'failed' }), { timeout: 20_000 })
      .toBe(4);
    expect(await sample('webhook_deliveries_total', { kind: 'monitoring', outcome: 'failed' })).toBe(4);
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/webhook_attempt_duration_seconds_count\{[^}]*kind="monitoring"[^}]*\} 4/);
  }, 60_000);
});
