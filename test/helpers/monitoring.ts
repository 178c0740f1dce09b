/**
 * Monitoring API helpers for tests: calls under /v1 with an API key, and read-side fixtures
 * (events, deliveries and attempts written directly, as the delivery pipeline would).
 */
import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from './app.js';

export function v1(
  t: TestApp,
  method: 'GET' | 'POST' | 'DELETE',
  url: string,
  key: string,
  body?: unknown,
): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method,
    url: `/v1${url}`,
    headers: { authorization: `Bearer ${key}` },
    ...(body === undefined ? {} : { payload: body as object }),
  });
}

export interface AttemptFixture {
  at: Date;
  statusCode: number | null;
  error?: string | null;
  durationMs?: number;
  trigger?: 'scheduled' | 'manual' | 'recover' | 'worker_lost';
}

/** A stored event and its delivery with the given attempts, as the pipeline writes them. */
export async function insertDelivery(
  t: TestApp,
  subscription: { id: string; companyId: string; vehicleId: string },
  d: {
    kind: string;
    status: 'pending' | 'retrying' | 'succeeded' | 'failed';
    createdAt: Date;
    nextAttemptAt?: Date | null;
    attempts?: AttemptFixture[];
  },
): Promise<{ id: string; eventId: string }> {
  const event = await t.pool.query<{ id: string }>(
    `INSERT INTO monitoring_events (subscription_id, company_id, vehicle_id, kind, episode_key, severity, occurred_at, detected_at, body)
     VALUES ($1, $2, $3, $4, '', 'medium', $5, $5, '{}') RETURNING id`,
    [subscription.id, subscription.companyId, subscription.vehicleId, d.kind, d.createdAt],
  );
  const eventId = event.rows[0]!.id;
  const attempts = d.attempts ?? [];
  const scheduled = attempts.filter((a) => (a.trigger ?? 'scheduled') === 'scheduled' || a.trigger === 'worker_lost');
  const delivery = await t.pool.query<{ id: string }>(
    `INSERT INTO monitoring_deliveries (event_id, subscription_id, company_id, status, attempts_made, scheduled_attempts,
                                        next_attempt_at, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
    [
      eventId,
      subscription.id,
      subscription.companyId,
      d.status,
      attempts.length,
      scheduled.length,
      d.nextAttemptAt ?? null,
      d.createdAt,
    ],
  );
  const id = delivery.rows[0]!.id;
  for (const [index, a] of attempts.entries()) {
    await t.pool.query(
      `INSERT INTO monitoring_attempts (delivery_id, attempt_number, trigger, started_at, duration_ms, status_code, error,
                                        subscription_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        id,
        index + 1,
        a.trigger ?? 'scheduled',
        a.at,
        a.durationMs ?? 12,
        a.statusCode,
        a.error ?? null,
        subscription.id,
      ],
    );
  }
  return { id, eventId };
}
