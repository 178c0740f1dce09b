/** Core webhook subscriptions and their deliveries as the public API shows them (never the secret). */
import type { DeliveryRecord, SubscriptionRecord } from '../db/webhooks.js';

export function presentWebhookSubscription(s: SubscriptionRecord) {
  return { id: s.id, url: s.url, events: s.events, created_at: s.createdAt.toISOString() };
}

export function presentWebhookDelivery(d: DeliveryRecord) {
  return {
    id: d.id,
    event_id: d.eventId,
    event: d.event,
    status: d.status,
    created_at: d.createdAt.toISOString(),
    completed_at: d.completedAt?.toISOString() ?? null,
    attempts: d.attempts.map((a) => ({ ...a, started_at: new Date(a.started_at).toISOString() })),
    attempt_count: d.attemptCount,
  };
}
