/**
 * battery_voltage_low: the onset of the health battery alert (src/health/rules/battery-voltage.ts:
 * resting < 12.2 V / < 11.8 V or charging < 13.2 V held for the confirmation time, re-armed after
 * threshold + 0.2 V for 2 min; docs/health.md "Sources"). One episode at a time (key '').
 */
import { followHealthAlerts } from '../health-alerts.js';

export const batteryVoltageLowDetector = followHealthAlerts({
  kind: 'battery_voltage_low',
  matches: (alert) => alert.type === 'battery_voltage_low',
  keyOf: () => '',
  signals: ['battery_voltage', 'engine_state'],
});
