/**
 * tire_pressure_low: the onset of a health tire alert, one episode per tire (key = the position,
 * e.g. `front_left`). Thresholds in src/health/rules/tire-pressure.ts: ≤ 90 % of placard low,
 * ≤ 75 % high (FMVSS 138), re-armed at ≥ 92 % (docs/health.md "Sources").
 */
import { followHealthAlerts } from '../health-alerts.js';

export const tirePressureLowDetector = followHealthAlerts({
  kind: 'tire_pressure_low',
  matches: (alert) => alert.type === 'tire_pressure_low',
  keyOf: (alert) => alert.key,
  signals: ['tire_pressure_kpa'],
});
