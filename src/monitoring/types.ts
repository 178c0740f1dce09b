/**
 * The monitoring detector contract (docs/monitoring.md). A detector is a pure
 * function of (previous state, new input, subscription options, now) → (new state, detections),
 * the same shape as the health rules (src/health/types.ts). No I/O and no clock.
 *
 * Terminology:
 * - monitoring subscription: one vehicle, one webhook URL, a list of kinds, a tier and options.
 * - detector: the pure logic of one kind (src/monitoring/detectors/<kind>.ts), listed in one
 *   ordered registry.
 * - detection: a kind firing for one episode of one key (the maintenance item, the DTC code, the
 *   geofence; '' when a kind has one episode at a time). It becomes a monitoring event (stored,
 *   signed and delivered) in the worker, or an entry of a dry-run answer.
 * - episode: a condition continuously true (with hysteresis). A detector fires once at its onset
 *   and re-arms after it clears; the end of an episode sends nothing.
 * - late sample: one recorded before the newest sample the detector already read for that signal;
 *   it never creates a detection (Traccar's BasePositionEventHandler).
 *
 * The input is fed by the health stage (one pipeline): the same new samples the health rules
 * read, the provider events stored since the last evaluation, and the health engine's result for
 * this evaluation (its active alerts and trusted odometer), so maintenance and system warnings
 * follow the health alerts' episodes and thresholds.
 */
import type { RuleSample } from '../domain/sample.js';
import type { ActiveAlert } from '../domain/health.js';
import type { VehiclePredictions } from '../domain/predictions.js';
import type { Geofence } from '../domain/geo.js';
import type { EventSample } from '../domain/sample.js';
import type { AlertSeverity, LinkBroken } from '../domain/vehicle.js';
import type { MonitoringKind, MonitoringOptions } from '../domain/monitoring-kinds.js';

export interface MonitoringInput {
  /** New samples in feed order (oldest first; engine_state first at equal times). */
  samples: readonly RuleSample[];
  /** New provider events, oldest first. */
  events: readonly EventSample[];
  /** The health engine's result of this evaluation. */
  health: {
    /** Alerts active after this evaluation (maintenance items, battery, coolant, tires, brakes, DTCs). */
    alerts: readonly ActiveAlert[];
    /** The trusted odometer after this evaluation. */
    odometer: { km: number; at: Date } | null;
    linkBroken: LinkBroken | null;
    /** The vehicle's most recent service of any type (details.last_service), or null. */
    lastServiceAt: Date | null;
  };
  /** The geofences this subscription watches (options.geofenceIds resolved by the worker). */
  geofences: readonly Geofence[];
}

export interface Detection {
  kind: MonitoringKind;
  /** The episode key: maintenance item, DTC code, geofence id, or ''. */
  key: string;
  /** When the triggering reading was taken (the event's `occurred_at`). */
  occurredAt: Date;
  severity: AlertSeverity;
  /** details.description: one sentence a fleet manager reads, with the measured values. */
  description: string;
}

export interface DetectorResult<S> {
  state: S;
  detections: Detection[];
}

export interface Detector<S> {
  kind: MonitoringKind;
  /** State of a subscription that has seen nothing yet (JSON-serializable, bounded in size). */
  initial(): S;
  detect(prev: S, input: MonitoringInput, options: MonitoringOptions, now: Date): DetectorResult<S>;
}

/**
 * The webhook body (the contract's monitoring event plus the additive `event_id`, `subscription_id`,
 * `occurred_at`; docs/monitoring.md). Built once per event and stored as the exact bytes sent on every
 * attempt.
 */
export interface MonitoringEventBody {
  event: MonitoringKind;
  event_id: string;
  subscription_id: string;
  vehicle_id: string;
  /** When the event was detected (ISO 8601). */
  timestamp: string;
  /** When the triggering reading was taken (ISO 8601). */
  occurred_at: string;
  severity: AlertSeverity;
  details: {
    type: string;
    description: string;
    /** Trusted odometer in miles, or null when unknown. */
    current_mileage: number | null;
    /** Date (YYYY-MM-DD) of the last service, or null. */
    last_service: string | null;
    /** Estimated cost as text, e.g. "$80–$150", or null when not applicable. */
    estimated_cost: string | null;
  };
  actions: { recommended: string; urgent: boolean; can_drive: boolean };
  /**
   * Premium subscriptions only ("premium covers all events plus predictions"): the lifetime
   * report's forecasts for the vehicle, null where unknown. Absent from basic and standard bodies.
   */
  predictions?: VehiclePredictions;
}
