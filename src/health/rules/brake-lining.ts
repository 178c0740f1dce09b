/**
 * Brake lining (docs/health.md "Sources" `brake_wear_detected`; J1939 EBC4 "brake lining
 * remaining"): at or below `lowPercent`: medium; at or below `criticalPercent`: high. Pads only wear
 * down, so the alert is latched until the lining reads above `rearmPercent`, which only new pads
 * do; a sensor jittering around the threshold raises one alert.
 *
 * State is JSON: the active alert's severity and the reading that raised it.
 */
import type { AlertSeverity } from '../../domain/vehicle.js';
import type { ActiveAlert } from '../../domain/health.js';
import type { Rule } from '../types.js';
import { nonNegativeValue } from '../sample-values.js';

type BrakeSeverity = Extract<AlertSeverity, 'medium' | 'high'>;

export interface BrakeLiningState {
  alert: { severity: BrakeSeverity; percent: number } | null;
}

const ALERT_TYPE = 'brake_wear_detected';
const ALERT_KEY = 'brakes';
const severityRank: Record<BrakeSeverity, number> = { medium: 0, high: 1 };

function initialBrakeLiningState(): BrakeLiningState {
  return { alert: null };
}

function displayName(lining: number): string {
  return `Brake lining low: ${Math.round(lining)}% remaining`;
}

export const brakeLiningRule: Rule<BrakeLiningState> = {
  name: 'brake_lining',
  initial: initialBrakeLiningState,
  evaluate(prev, input, config) {
    const brakes = config.brakes;
    let alert = prev.alert;
    for (const sample of input.samples) {
      if (sample.signal !== 'brake_lining_percent') continue;
      const lining = nonNegativeValue(sample.value);
      if (lining === null) continue;
      if (alert && lining > brakes.rearmPercent) alert = null;
      const severity: BrakeSeverity | null =
        lining <= brakes.criticalPercent ? 'high' : lining <= brakes.lowPercent ? 'medium' : null;
      if (severity && (!alert || severityRank[severity] > severityRank[alert.severity]))
        alert = { severity, percent: lining };
    }
    const alerts: ActiveAlert[] = alert
      ? [
          {
            key: ALERT_KEY,
            severity: alert.severity,
            type: ALERT_TYPE,
            display_name: displayName(alert.percent),
            due_date: null,
            due_miles_remaining: null,
          },
        ]
      : [];
    return { state: { alert }, alerts, recheckAtMs: null };
  },
};
