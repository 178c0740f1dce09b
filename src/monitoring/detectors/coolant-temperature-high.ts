/**
 * coolant_temperature_high: the onset of the health coolant alert
 * (src/health/rules/coolant-temperature.ts: ≥ 105 °C for 60 s while running, ≥ 112 °C at once;
 * re-armed below 100 °C for 60 s; docs/health.md "Sources"). One episode at a time (key '').
 */
import { followHealthAlerts } from '../health-alerts.js';

export const coolantTemperatureHighDetector = followHealthAlerts({
  kind: 'coolant_temperature_high',
  matches: (alert) => alert.type === 'coolant_temperature_high',
  keyOf: () => '',
  signals: ['coolant_temp_c', 'engine_state'],
});
