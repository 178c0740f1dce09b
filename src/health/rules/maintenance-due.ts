/**
 * maintenance_due: one alert per configured interval that is due soon or overdue (docs/health.md
 * "Maintenance").
 * Stateless: the due status follows from the last service, the baseline and the trusted odometer
 * each time, and the engine tells opened from resolved alerts by comparing successive sets; a
 * service entry changes `lastServices` and so resolves the alert.
 *
 * Baseline without service history: the first trusted odometer reading (when we started tracking
 * the vehicle's distance). Before there is one, `createdAt` with the odometer at that time
 * estimated from today's trusted odometer and the 30-day average daily distance
 * (maintenance.ts `estimateOdometerKmAt`). Taking today's odometer as the baseline would move it
 * with every reading, so the distance part would never come due.
 *
 * While the tracker contradicts the odometer (link conflict) distances are unverified, so only
 * the time-based status is reported (docs/health.md "Sources").
 */
import type { AlertSeverity } from '../../domain/vehicle.js';
import type { MaintenanceInterval } from '../../domain/health-config.js';
import { msPerDay } from '../../domain/units.js';
import { daysBetween, startOfIsoDate } from '../dates.js';
import { formatDueDate, maintenanceDueTime, type MaintenanceDue } from '../maintenance.js';
import type { ActiveAlert } from '../../domain/health.js';
import { earliestAfter } from '../recheck.js';
import type { Rule } from '../types.js';
import { typeLabel } from '../../domain/labels.js';

function displayName(type: string, due: MaintenanceDue, interval: MaintenanceInterval): string {
  const name = typeLabel(type);
  const miles = due.dueMilesRemaining;
  if (due.status === 'overdue') {
    if (miles !== null && miles < 0) return `${name} overdue by ${-miles} mi`;
    if (miles === 0) return `${name} due now`;
    return `${name} overdue since ${due.dueDate}`;
  }
  if (miles !== null && miles <= interval.soonMiles) return `${name} due in ${miles} mi`;
  return `${name} due by ${due.dueDate}`;
}

/** Overdue by more than the escalation limits: whole calendar days past the due date, or miles. */
function escalated(due: MaintenanceDue, interval: MaintenanceInterval, now: Date): boolean {
  if (due.dueMilesRemaining !== null && -due.dueMilesRemaining > interval.escalateAfterMiles) return true;
  if (due.dueDate === null) return false;
  const daysOverdue = Math.floor(daysBetween(startOfIsoDate(due.dueDate), now));
  return daysOverdue > interval.escalateAfterDays;
}

/** When an overdue interval escalates by time: `escalateAfterDays` whole days after its due date. */
function escalatesAtMs(dueAt: number | null, interval: MaintenanceInterval): number | null {
  return dueAt === null ? null : (Math.floor(dueAt / msPerDay) + interval.escalateAfterDays + 1) * msPerDay;
}

function severity(due: MaintenanceDue, interval: MaintenanceInterval, now: Date): AlertSeverity {
  if (due.status === 'due_soon') return interval.soonSeverity;
  return escalated(due, interval, now) ? interval.escalatedSeverity : interval.overdueSeverity;
}

export const maintenanceDueRule: Rule<Record<string, never>> = {
  name: 'maintenance_due',
  initial: () => ({}),
  evaluate(prev, input, config, now) {
    const alerts: ActiveAlert[] = [];
    const changes: Array<number | null> = [];
    const baseline = input.firstOdometer
      ? { at: input.firstOdometer.at, odometerKm: input.firstOdometer.km }
      : { at: input.vehicle.createdAt, odometerKm: null };
    const odometer = input.linkBroken?.reason === 'conflict' ? null : input.odometer;
    for (const [type, interval] of Object.entries(config.maintenance)) {
      const dueTime = maintenanceDueTime(
        interval,
        input.vehicle.lastServices[type] ?? null,
        baseline,
        odometer,
        input.averageDailyKm,
        now,
      );
      if (!dueTime) continue;
      changes.push(dueTime.changesAtMs, escalatesAtMs(dueTime.dueAt, interval));
      if (dueTime.status === 'upcoming') continue;
      const due = formatDueDate(dueTime);
      alerts.push({
        key: type,
        severity: severity(due, interval, now),
        type,
        display_name: displayName(type, due, interval),
        due_date: due.dueDate,
        due_miles_remaining: due.dueMilesRemaining,
        overdue: due.status === 'overdue',
      });
    }
    return { state: prev, alerts, recheckAtMs: earliestAfter(now.getTime(), changes) };
  },
};
