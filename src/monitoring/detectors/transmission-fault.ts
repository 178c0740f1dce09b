/**
 * transmission_fault: the onset of a health diagnostic-code alert of this type, one episode per
 * code (key = the code): an active P07xx/P08xx code (medium; high with the MIL). A code clears
 * after 2 reports without it and then re-arms (src/health/rules/diagnostic-codes.ts,
 * docs/health.md "Sources").
 */
import { followHealthAlerts } from '../health-alerts.js';

export const transmissionFaultDetector = followHealthAlerts({
  kind: 'transmission_fault',
  matches: (alert) => alert.type === 'transmission_fault',
  keyOf: (alert) => alert.key,
  signals: ['dtcs', 'check_engine_light'],
});
