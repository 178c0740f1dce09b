/** Monitoring subscriptions (never the secret), their endpoint health and deliveries as the public API shows them. */
import type { EndpointHealthRecord, MonitoringDeliveryRecord } from '../db/monitoring-deliveries.js';
import type { MonitoringSubscriptionRecord } from '../db/monitoring-subscriptions.js';
import { completeMonitoringOptions } from '../domain/monitoring-kinds.js';

export function presentMonitoringSubscription(s: MonitoringSubscriptionRecord) {
  return {
    id: s.id,
    vehicle_id: s.vehicleId,
    webhook_url: s.webhookUrl,
    events: s.events,
    tier: s.tier,
    options: completeMonitoringOptions(s.options),
    status: s.deletedAt ? ('deleted' as const) : ('active' as const),
    created_at: s.createdAt.toISOString(),
  };
}

export function presentEndpointHealth(health: EndpointHealthRecord) {
  return {
    success_rate: health.attempts > 0 ? health.successes / health.attempts : null,
    attempts: health.attempts,
    last_success_at: health.lastSuccessAt?.toISOString() ?? null,
    last_failure_at: health.lastFailure?.at.toISOString() ?? null,
    last_failure: health.lastFailure
      ? { status_code: health.lastFailure.statusCode, error: health.lastFailure.error }
      : null,
  };
}

export function presentMonitoringDelivery(d: MonitoringDeliveryRecord) {
  return {
    id: d.id,
    event_id: d.eventId,
    event: d.event,
    status: d.status,
    attempts: d.attempts.map((a) => ({
      at: a.at.toISOString(),
      status_code: a.statusCode,
      error: a.error,
      duration_ms: a.durationMs,
      trigger: a.trigger,
    })),
    attempt_count: d.attemptCount,
    next_attempt_at: d.nextAttemptAt?.toISOString() ?? null,
    created_at: d.createdAt.toISOString(),
  };
}
