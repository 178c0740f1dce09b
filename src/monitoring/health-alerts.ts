/**
 * Detectors that follow the health engine's alerts (maintenance alerts, system warnings,
 * maintenance due): the health rules already implement the thresholds, confirmation times,
 * hysteresis and re-arm of docs/health.md "Sources", so monitoring does not judge those readings
 * a second time. A detection fires when an alert of the kind is active now for a key that was not
 * active at the detector's previous evaluation (the onset of an episode); the key re-arms once its
 * alert is gone. A severity change inside the episode sends nothing.
 *
 * Late samples cannot open an alert: the health stage feeds each signal only samples newer than
 * its per-signal watermark (src/evaluation/evaluate-vehicles.ts).
 *
 * occurredAt: the newest sample of the kind's signals in this evaluation (the reading that made
 * the alert active), or `now` when none came (a confirmation timer or a due date ran out in a
 * sweep).
 */
import type { ActiveAlert } from '../domain/health.js';
import { newestSampleAt } from './fresh.js';
import type { MonitoringKind } from '../domain/monitoring-kinds.js';
import type { Detection, Detector } from './types.js';

export interface FollowedAlertsState {
  /** The keys whose alert was active at the last evaluation, sorted. */
  active: string[];
}

/** Bounds the state against a broken feed; the DTC rule keeps at most 64 codes too. */
const maxActiveKeys = 64;

export interface FollowedAlerts {
  kind: MonitoringKind;
  /** Whether a health alert belongs to this kind. */
  matches: (alert: ActiveAlert) => boolean;
  /** The episode key of a matching alert ('' when the kind has one episode at a time). */
  keyOf: (alert: ActiveAlert) => string;
  /** The signals whose newest sample dates an onset. */
  signals: readonly string[];
}

/** The maintenance rule is the only one that says whether its alert is overdue. */
export function isMaintenanceAlert(alert: ActiveAlert): boolean {
  return typeof alert.overdue === 'boolean';
}

export function followHealthAlerts(parts: FollowedAlerts): Detector<FollowedAlertsState> {
  return {
    kind: parts.kind,
    initial: () => ({ active: [] }),
    detect(prev, input, _options, now) {
      const current = new Map<string, ActiveAlert>();
      for (const alert of input.health.alerts) {
        if (!parts.matches(alert)) continue;
        const key = parts.keyOf(alert);
        if (!current.has(key) && current.size < maxActiveKeys) current.set(key, alert);
      }
      const before = new Set(prev.active);
      const detections: Detection[] = [];
      for (const [key, alert] of current) {
        if (before.has(key)) continue;
        detections.push({
          kind: parts.kind,
          key,
          occurredAt: newestSampleAt(input.samples, parts.signals, now),
          severity: alert.severity,
          description: `${alert.display_name}.`,
        });
      }
      return { state: { active: [...current.keys()].sort() }, detections };
    },
  };
}
