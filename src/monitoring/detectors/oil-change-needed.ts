/**
 * oil_change_needed: the onset of the health `oil_change` maintenance alert (due soon within
 * 500 mi / 14 days of 5,000 mi / 6 months, or overdue; src/domain/health-config.ts, docs/health.md
 * "Sources"). Re-armed when the alert resolves (a service entry). Key `oil_change`.
 */
import { odometerSignals } from '../../domain/sample.js';
import { followHealthAlerts, isMaintenanceAlert } from '../health-alerts.js';

export const oilChangeNeededDetector = followHealthAlerts({
  kind: 'oil_change_needed',
  matches: (alert) => isMaintenanceAlert(alert) && alert.type === 'oil_change',
  keyOf: (alert) => alert.type,
  signals: odometerSignals,
});
