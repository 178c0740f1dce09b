/**
 * The health engine's stored vocabulary: a vehicle's health state (the JSON kept between
 * evaluations) and the events an evaluation writes. The rules (src/health/) compute them; the
 * database (src/db/health.ts) stores and returns them.
 */
import type { AlertSeverity, HealthStatus, LinkBrokenReason } from './vehicle.js';

/** An alert a rule holds active; `key` tells apart alerts of one type (a tire, a DTC code). */
export interface ActiveAlert {
  key: string;
  severity: AlertSeverity;
  type: string;
  display_name: string;
  due_date: string | null;
  due_miles_remaining: number | null;
  /** Maintenance alerts: past due (not only due soon). Not shown in the API; the runs stage reads it. */
  overdue?: boolean;
}

/** The tracker-link rule's state (src/health/rules/link-broken.ts): the trusted odometer and its history. */
export interface LinkState {
  /** The trusted odometer; `at` is the reading's time, `source` its provider or `manual`. */
  trusted: { km: number; at: string; source: string } | null;
  /** The latest provider (tracker) odometer reading, trusted or not: tells no_reading and stale. */
  lastTracker: { km: number; at: string } | null;
  /** Consecutive conflicting provider readings (capped at `confirmReadings`). */
  candidates: number;
  /** Set while the tracker contradicts the trusted odometer; `since` = last trusted reading's time. */
  conflict: { since: string; trackerKm: number } | null;
  /** Consecutive consistent provider readings while in conflict (capped at `confirmReadings`). */
  consistentInConflict: number;
  /** The last trusted km of each UTC day, oldest first, for the last 31 days: average daily distance. */
  daily: Array<{ day: string; km: number }>;
  /**
   * The first trusted odometer (reset by a correcting anchor): the stable starting point of
   * maintenance intervals for a vehicle without service history. Absent in states stored before it existed.
   */
  first?: { km: number; at: string } | null;
}

export interface HealthState {
  link: LinkState;
  /** Each rule's own state, by rule name. */
  rules: Record<string, unknown>;
  /** The active alerts of the last evaluation, to tell what opened, changed or resolved. */
  alerts: ActiveAlert[];
  status: HealthStatus;
  linkReason: LinkBrokenReason | null;
}

/**
 * A health state as stored (src/health/stored-state.ts): of the link and of each rule, only the
 * fields that differ from their initial value; a rule still at its initial state has no entry.
 * A state stored before that encoding is complete, which this type also describes.
 */
export interface StoredHealthState {
  link?: Partial<LinkState>;
  rules?: Record<string, unknown>;
  alerts: ActiveAlert[];
  status: HealthStatus;
  linkReason: LinkBrokenReason | null;
}

export type HealthEventKind = 'alert_opened' | 'alert_changed' | 'alert_resolved' | 'status_changed' | 'link_changed';

export interface HealthEvent {
  kind: HealthEventKind;
  payload: Record<string, unknown>;
}
