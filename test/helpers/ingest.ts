/** Helpers for ingestion tests: provider connections, signed pushes, waiting for the worker. */
import { hmacHex } from '../../providers/signing.js';
import type { TestApp } from './app.js';

export async function createConnection(
  t: TestApp,
  companyId: string,
  provider: string,
  config: Record<string, string> = {},
  extra: Record<string, unknown> = {},
) {
  const response = await t.admin('POST', `/companies/${companyId}/provider-connections`, {
    provider,
    config,
    ...extra,
  });
  if (response.statusCode !== 201) throw new Error(`connection create failed: ${response.body}`);
  return response.json().data as {
    id: string;
    ingest_url: string | null;
    generated_secret: string | null;
    config_keys: string[];
  };
}

/** A push signed the generic way: X-Signature: sha256=<hex HMAC-SHA256(secret, body)>. */
export async function pushGeneric(
  t: TestApp,
  provider: 'generic' | 'simulator',
  connectionId: string,
  secret: string,
  payload: unknown,
) {
  const body = typeof payload === 'string' ? payload : JSON.stringify(payload);
  return t.app.inject({
    method: 'POST',
    url: `/ingest/v1/${provider}/${connectionId}`,
    headers: { 'content-type': 'application/json', 'x-signature': `sha256=${hmacHex('sha256', secret, body)}` },
    payload: body,
  });
}

/** Waits until no inbox row is pending (each is processed, or parked because it failed on its own). */
export async function drainInbox(t: TestApp, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const { rows } = await t.pool.query(
      `SELECT count(*)::int AS n FROM ingest_inbox WHERE processed_at IS NULL AND parked_at IS NULL`,
    );
    if (rows[0].n === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('inbox not drained in time');
}

export async function readingCount(t: TestApp, vehicleId: string): Promise<number> {
  const { rows } = await t.pool.query(`SELECT count(*)::int AS n FROM readings WHERE vehicle_id = $1`, [vehicleId]);
  return rows[0].n;
}

/** Waits until the inbox is drained and the health queue is idle (a health worker must be running). */
export async function settle(t: TestApp, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  await drainInbox(t, timeoutMs);
  let idleChecks = 0;
  while (Date.now() < deadline) {
    // Delayed jobs are left out: the sweep's scheduler always keeps its next run delayed.
    const counts = await t.queues.queue('health').getJobCounts('waiting', 'active', 'prioritized');
    const busy = Object.values(counts).reduce((sum, n) => sum + n, 0);
    idleChecks = busy === 0 ? idleChecks + 1 : 0;
    // Idle twice in a row: a follow-up run kept by keepLastIfActive has been picked up too.
    if (idleChecks >= 2) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('health queue not idle in time');
}

/** A generic push of `count` readings of one vehicle a second apart from `startMs`, two samples each. */
export function genericBatch(vehicle: string, count: number, startMs: number) {
  return {
    readings: Array.from({ length: count }, (_, i) => ({
      vehicle,
      ts: new Date(startMs + i * 1000).toISOString(),
      signals: { speed_kph: i % 100, fuel_percent: 50 + (i % 40) },
    })),
  };
}
