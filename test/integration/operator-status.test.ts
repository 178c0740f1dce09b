/**
 * The operator's live view: GET /admin/v1/status, `fleetctl status`, and the backlog gauges on
 * /metrics that the Grafana dashboard reads (docs/grafana/fleet.json).
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fleetctl } from '../../src/cli/fleetctl.js';
import { createMetrics } from '../../src/metrics.js';
import { installPipelineGauges, loadPipelineStatus } from '../../src/queue/status.js';
import { adminToken, createTestApp, type TestApp } from '../helpers/app.js';
import { createConnection, pushGeneric } from '../helpers/ingest.js';

let t: TestApp;
let env: Record<string, string>;

beforeAll(async () => {
  t = await createTestApp();
  const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  env = { FLEET_API_URL: address, ADMIN_TOKEN: adminToken };
  // A push that no worker takes yet: one inbox row pending and one ingest job waiting.
  const company = await t.createCompany('Status Co');
  const connection = await createConnection(t, company.id, 'generic');
  const pushed = await pushGeneric(t, 'generic', connection.id, connection.generated_secret!, {
    readings: [{ vehicle: 'truck-1', ts: new Date().toISOString(), signals: { fuel_percent: 50 } }],
  });
  expect(pushed.statusCode).toBe(202);
  await t.pool.query(`UPDATE ingest_inbox SET received_at = now() - interval '90 seconds'`);
});
afterAll(() => t.close());

async function run(...argv: string[]) {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const code = await fleetctl(argv, { env, stdout: (l) => stdout.push(l), stderr: (l) => stderr.push(l) });
  return { code, stdout, stderr };
}

describe('pipeline status', () => {
  it('answers queue depths, the ingest lag and the delivery backlogs to the operator only', async () => {
    expect((await t.app.inject('/admin/v1/status')).statusCode).toBe(401);
    const res = await t.admin('GET', '/status');
    expect(res.statusCode).toBe(200);
    const status = res.json().data;
    expect(status.queues.map((q: { name: string }) => q.name)).toEqual([
      'maintenance',
      'ingest',
      'pull',
      'health',
      'runs',
      'webhooks',
    ]);
    const ingest = status.queues.find((q: { name: string }) => q.name === 'ingest');
    expect(ingest.counts.waiting + ingest.counts.prioritized).toBeGreaterThanOrEqual(1);
    expect(ingest.paused).toBe(false);
    expect(status.ingest.pending_rows).toBe(1);
    expect(status.ingest.lag_seconds).toBeGreaterThanOrEqual(90);
    expect(status.ingest.parked_rows).toBe(0);
    expect(status.deliveries).toEqual({ core_open: 0, monitoring_pending: 0, monitoring_retrying: 0 });
  });

  it('fleetctl status prints it, as a table or JSON, and --count frames one after another', async () => {
    const human = await run('status');
    expect(human.code).toBe(0);
    const text = human.stdout.join('\n');
    expect(text).toMatch(/^QUEUE\s+WAITING\s+ACTIVE\s+DELAYED\s+PRIORITIZED\s+FAILED\s+COMPLETED\s+PAUSED$/m);
    expect(text).toMatch(/^ingest: lag \d+(\.\d+)? s, 1 inbox rows pending, 0 parked$/m);
    expect(text).toContain('reads: all on the primary (no DATABASE_REPLICA_URLS)');

    const json = await run('status', '--json', '--watch', '--count', '2', '--interval', '0.05');
    expect(json.code).toBe(0);
    expect(json.stdout).toHaveLength(2);
    expect(json.stdout.map((frame) => JSON.parse(frame).ingest.pending_rows)).toEqual([1, 1]);

    const bad = await run('status', '--interval', 'soon');
    expect([bad.code, bad.stderr[0]]).toEqual([1, 'fleetctl: --interval must be a positive number (got "soon")']);
  });

  it('exports the backlogs as gauges, read once per scrape', async () => {
    const metrics = createMetrics('api');
    installPipelineGauges(metrics, () => loadPipelineStatus(t.queues, t.pool));
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/^ingest_lag_seconds\{process="api"\} (9\d|1\d\d)(\.\d+)?$/m);
    expect(text).toContain('ingest_inbox_rows{state="pending",process="api"} 1');
    expect(text).toMatch(/^queue_jobs\{queue="ingest",state="(waiting|prioritized)",process="api"\} 1$/m);
    expect(text).toContain('webhook_deliveries_owed{kind="monitoring",status="retrying",process="api"} 0');
  });
});

describe('Grafana dashboard (docs/grafana/fleet.json)', () => {
  it('queries only metrics that the processes export', async () => {
    const dashboard = JSON.parse(readFileSync(new URL('../../docs/grafana/fleet.json', import.meta.url), 'utf8'));
    const expressions: string[] = dashboard.panels.flatMap((panel: any) =>
      (panel.targets ?? []).map((target: any) => target.expr as string),
    );
    expect(expressions.length).toBeGreaterThanOrEqual(8);
    // What an API process and a worker process export: the same registry shape plus the gauges.
    const metrics = createMetrics('api');
    installPipelineGauges(metrics, () => loadPipelineStatus(t.queues, t.pool));
    const exported = new Set((await metrics.registry.getMetricsAsJSON()).map((metric) => metric.name));
    const promqlWords = new Set(['sum', 'rate', 'max', 'by', 'histogram_quantile', 'le', 'increase', 'irate']);
    for (const expr of expressions) {
      const names = [...expr.replace(/\{[^}]*\}/g, '').matchAll(/[a-z_][a-z0-9_]*/g)]
        .map((m) => m[0])
        .filter((word) => !promqlWords.has(word) && word.includes('_'));
      expect(names.length, expr).toBeGreaterThan(0);
      for (const name of names) {
        const base = name.replace(/_(bucket|sum|count)$/, '');
        expect(exported.has(name) || exported.has(base), `${name} in ${expr}`).toBe(true);
      }
    }
  });
});
