/**
 * abs_warning: the onset of a health diagnostic-code alert of this type, one episode per code (key
 * = the code): an active chassis (C) code (high). A code clears after 2 reports without it and
 * then re-arms (src/health/rules/diagnostic-codes.ts, docs/health.md "Sources").
 */
import { followHealthAlerts } from '../health-alerts.js';

export const absWarningDetector = followHealthAlerts({
  kind: 'abs_warning',
  matches: (alert) => alert.type === 'abs_warning',
  keyOf: (alert) => alert.key,
  signals: ['dtcs', 'check_engine_light'],
});
