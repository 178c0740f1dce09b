/**
 * brake_wear_detected: the onset of the health brake-lining alert (src/health/rules/brake-lining.ts:
 * ≤ 25 % medium, ≤ 10 % high, re-armed only above 50 %, i.e. new pads; docs/health.md "Sources").
 * One episode at a time (key '').
 */
import { followHealthAlerts } from '../health-alerts.js';

export const brakeWearDetectedDetector = followHealthAlerts({
  kind: 'brake_wear_detected',
  matches: (alert) => alert.type === 'brake_wear_detected',
  keyOf: () => '',
  signals: ['brake_lining_percent'],
});
