/**
 * check_engine_light: the onset of a health diagnostic-code alert of this type, one episode per
 * code (key = the code): an active powertrain, network or J1939 code (medium; low for a network
 * code without the MIL), or the MIL reported without codes (key `mil`). A code clears after 2
 * reports without it and then re-arms (src/health/rules/diagnostic-codes.ts,
 * docs/health.md "Sources").
 */
import { followHealthAlerts } from '../health-alerts.js';

export const checkEngineLightDetector = followHealthAlerts({
  kind: 'check_engine_light',
  matches: (alert) => alert.type === 'check_engine_light',
  keyOf: (alert) => alert.key,
  signals: ['dtcs', 'check_engine_light'],
});
