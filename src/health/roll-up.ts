/**
 * The vehicle's health status from its active alerts and link state (docs/health.md "Sources",
 * after KZ Vehicle Manager's red = overdue / yellow = due soon).
 *
 * Precedence, first match wins:
 * 1. critical: any critical alert, or a high alert of a safety type (brakes, tires, airbag, ABS,
 *    coolant), since driving on those endangers people rather than the engine's warranty.
 * 2. needs_attention: any low, medium or high alert, or a stale or conflicting tracker link (the
 *    odometer behind maintenance due dates cannot be trusted).
 * 3. unknown: no odometer reading from the tracker (link_broken no_reading) or no telemetry at
 *    all; reached only without a low-or-higher alert, so a known problem is never hidden as unknown.
 * 4. ok.
 * info alerts never change the status: they inform and would otherwise make every vehicle yellow.
 */
import type { HealthStatus, LinkBroken } from '../domain/vehicle.js';
import type { ActiveAlert } from '../domain/health.js';

const safetyAlertTypes: ReadonlySet<string> = new Set([
  'brake_wear_detected',
  'brake_inspection',
  'tire_pressure_low',
  'airbag_warning',
  'abs_warning',
  'coolant_temperature_high',
]);

export function rollUpHealth(
  alerts: readonly ActiveAlert[],
  linkBroken: LinkBroken | null,
  hasTelemetry: boolean,
): HealthStatus {
  const critical = alerts.some(
    (alert) => alert.severity === 'critical' || (alert.severity === 'high' && safetyAlertTypes.has(alert.type)),
  );
  if (critical) return 'critical';
  const attention =
    alerts.some((alert) => alert.severity !== 'info') ||
    linkBroken?.reason === 'stale' ||
    linkBroken?.reason === 'conflict';
  if (attention) return 'needs_attention';
  if (linkBroken?.reason === 'no_reading' || !hasTelemetry) return 'unknown';
  return 'ok';
}
