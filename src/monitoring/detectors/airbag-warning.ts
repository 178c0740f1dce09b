/**
 * airbag_warning: the onset of a health diagnostic-code alert of this type, one episode per code
 * (key = the code): an active body/SRS (B) code (high). A code clears after 2 reports without it
 * and then re-arms (src/health/rules/diagnostic-codes.ts, docs/health.md "Sources").
 */
import { followHealthAlerts } from '../health-alerts.js';

export const airbagWarningDetector = followHealthAlerts({
  kind: 'airbag_warning',
  matches: (alert) => alert.type === 'airbag_warning',
  keyOf: (alert) => alert.key,
  signals: ['dtcs', 'check_engine_light'],
});
