/**
 * maintenance_due: the onset of any health maintenance alert (oil change, tire rotation, brake
 * inspection, …: src/domain/health-config.ts, docs/health.md "Sources"), one episode per item (key =
 * the item, e.g. `tire_rotation`). Re-armed when the item's alert resolves (a service entry).
 */
import { odometerSignals } from '../../domain/sample.js';
import { followHealthAlerts, isMaintenanceAlert } from '../health-alerts.js';

export const maintenanceDueDetector = followHealthAlerts({
  kind: 'maintenance_due',
  matches: isMaintenanceAlert,
  keyOf: (alert) => alert.type,
  signals: odometerSignals,
});
