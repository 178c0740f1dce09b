/**
 * The monitoring webhook body (the contract's monitoring event plus `event_id`, `subscription_id`,
 * `occurred_at`; docs/monitoring.md), built once per event: the worker stores its JSON bytes and sends
 * them unchanged on every attempt. `timestamp` is when the event was detected, `occurred_at` when
 * the triggering reading was taken; `current_mileage` is the trusted odometer in miles (0.1 mi).
 * A premium subscription's body adds `predictions` (the vehicle's forecasts at detection).
 */
import { isoDate } from '../health/dates.js';
import type { VehiclePredictions } from '../domain/predictions.js';
import { kmToMiles } from '../domain/units.js';
import { actionsOf, estimatedCostOf, kindProfiles } from './profiles.js';
import type { Detection, MonitoringEventBody } from './types.js';

export interface MonitoringEventContext {
  eventId: string;
  subscriptionId: string;
  vehicleId: string;
  detectedAt: Date;
  /** The trusted odometer, km; null when unknown. */
  odometerKm: number | null;
  /** The vehicle's most recent service of any type. */
  lastServiceAt: Date | null;
  /** Premium subscriptions: the vehicle's forecasts (detect-stage.ts `PredictionsLoader`). */
  predictions?: VehiclePredictions;
}

export function buildMonitoringEventBody(detection: Detection, context: MonitoringEventContext): MonitoringEventBody {
  return {
    event: detection.kind,
    event_id: context.eventId,
    subscription_id: context.subscriptionId,
    vehicle_id: context.vehicleId,
    timestamp: context.detectedAt.toISOString(),
    occurred_at: detection.occurredAt.toISOString(),
    severity: detection.severity,
    details: {
      type: kindProfiles[detection.kind].type,
      description: detection.description,
      current_mileage: context.odometerKm === null ? null : Math.round(kmToMiles(context.odometerKm) * 10) / 10,
      last_service: context.lastServiceAt === null ? null : isoDate(context.lastServiceAt),
      estimated_cost: estimatedCostOf(detection),
    },
    actions: actionsOf(detection.kind, detection.severity),
    ...(context.predictions ? { predictions: context.predictions } : {}),
  };
}

/** The most recent service of any type (`details.last_service`), or null. */
export function latestServiceAt(services: Readonly<Record<string, { at: Date }>>): Date | null {
  let latest: Date | null = null;
  for (const service of Object.values(services)) {
    if (!latest || service.at.getTime() > latest.getTime()) latest = service.at;
  }
  return latest;
}
