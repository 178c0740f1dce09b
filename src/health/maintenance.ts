/**
 * When a maintenance interval is due (docs/health.md "Sources"): miles or months, whichever
 * comes first, with Fleetio's forecast turning the distance part into a date from the average
 * daily distance. Pure: the engine supplies the last service of each type
 * (`VehicleFacts.lastServices`), the baseline (`VehicleFacts.createdAt`), the trusted odometer
 * and the average daily distance from the link state (rules/link-broken.ts).
 *
 * Canonical distances are km; miles appear here only because intervals are set in miles.
 */
import { kmToMiles, msPerDay } from '../domain/units.js';
import type { MaintenanceInterval } from '../domain/health-config.js';
import { addMonthsTime, daysBetween, isoDate } from './dates.js';
import { earliestAfter, nextUtcMidnightMs } from './recheck.js';

export interface MaintenanceDue {
  status: 'upcoming' | 'due_soon' | 'overdue';
  /**
   * YYYY-MM-DD: the earlier of the time due date and the distance forecast. Null only for a
   * distance-only interval whose forecast is unknown (no average daily distance, or a parked
   * vehicle averaging 0): the miles remaining still give the status.
   */
  dueDate: string | null;
  /** Miles until the due meter, rounded; negative = overdue. Null without a distance interval or odometer. */
  dueMilesRemaining: number | null;
  /** Which limit gave the due date: the time interval, or the distance (meter or forecast). */
  basis: 'distance' | 'time';
}

/** A service, or the baseline we count from without one; a null odometer is estimated (below). */
export interface MaintenancePoint {
  at: Date;
  odometerKm: number | null;
}

/**
 * The odometer at a past time when nobody recorded it: the trusted odometer minus the average
 * daily distance times the days between, or the trusted odometer itself when the average is
 * unknown. The distance part then counts from roughly where the vehicle was at that time, not
 * from today's reading (a baseline that moved with the odometer would never come due). Without
 * an average it falls back to today's reading: the distance part only starts counting from now,
 * which under-reports, but the time part still applies.
 */
export function estimateOdometerKmAt(
  at: Date,
  odometer: { km: number; at: Date } | null,
  averageDailyKm: number | null,
): number | null {
  if (!odometer) return null;
  if (averageDailyKm === null) return odometer.km;
  const days = Math.max(0, daysBetween(at, odometer.at));
  return Math.max(0, odometer.km - averageDailyKm * days);
}

/** `MaintenanceDue` with the due date as epoch milliseconds, not yet formatted. */
export interface MaintenanceDueTime extends Omit<MaintenanceDue, 'dueDate'> {
  dueAt: number | null;
  /**
   * The earliest time after `now` at which status or due date can change by time alone (epoch ms),
   * null when neither can: the time due date reached (overdue), the due date coming within
   * `soonDays` (due soon), the forecast reached (from then on it is today, so it moves), and, while
   * it is today, the next UTC midnight.
   */
  changesAtMs: number | null;
}

/**
 * The due status of one interval, or null when the interval is disabled or has neither a distance
 * nor a time part.
 *
 * Without a last service we count from the baseline (when we started tracking the vehicle, with
 * its odometer then) instead of from zero: counting from zero would flag every newly added
 * vehicle with 80,000 mi as thousands of miles overdue on every interval, although it may have
 * been serviced last week. Fleetio does the same for service programs (current meter + interval).
 *
 * A point (service or baseline) without an odometer is estimated with `estimateOdometerKmAt`.
 */
export function computeMaintenanceDue(
  interval: MaintenanceInterval,
  last: MaintenancePoint | null,
  baseline: MaintenancePoint,
  odometer: { km: number; at: Date } | null,
  averageDailyKm: number | null,
  now: Date,
): MaintenanceDue | null {
  const due = maintenanceDueTime(interval, last, baseline, odometer, averageDailyKm, now);
  return due && formatDueDate(due);
}

/** The due date as the YYYY-MM-DD that `MaintenanceDue` reports. */
export function formatDueDate(due: MaintenanceDueTime): MaintenanceDue {
  return {
    status: due.status,
    dueDate: due.dueAt === null ? null : isoDate(new Date(due.dueAt)),
    dueMilesRemaining: due.dueMilesRemaining,
    basis: due.basis,
  };
}

/**
 * `computeMaintenanceDue` in epoch milliseconds, without formatting the date: the maintenance rule
 * runs it for every interval of every vehicle each sweep and formats only the dates it reports
 * (an upcoming interval reports nothing).
 */
export function maintenanceDueTime(
  interval: MaintenanceInterval,
  last: MaintenancePoint | null,
  baseline: MaintenancePoint,
  odometer: { km: number; at: Date } | null,
  averageDailyKm: number | null,
  now: Date,
): MaintenanceDueTime | null {
  if (!interval.enabled) return null;
  if (interval.intervalMiles === null && interval.intervalMonths === null) return null;
  const from = last ?? baseline;
  const nowTime = now.getTime();

  const timeDue = interval.intervalMonths === null ? null : addMonthsTime(from.at, interval.intervalMonths);

  let dueMilesRemaining: number | null = null;
  let forecast: number | null = null;
  // The forecast moves with `now` once the projection passes the due meter, or while the odometer reads from the future.
  let forecastMoves = false;
  const fromKm = from.odometerKm ?? estimateOdometerKmAt(from.at, odometer, averageDailyKm);
  if (interval.intervalMiles !== null && odometer && fromKm !== null) {
    const dueMeterMiles = kmToMiles(fromKm) + interval.intervalMiles;
    const currentMiles = kmToMiles(odometer.km);
    dueMilesRemaining = Math.round(dueMeterMiles - currentMiles);
    const averageDailyMiles = averageDailyKm === null ? 0 : kmToMiles(averageDailyKm);
    if (averageDailyMiles > 0) {
      // Fleetio forecast: project the odometer to today, then drive the rest at the average.
      const projectedMiles = currentMiles + averageDailyMiles * Math.max(0, daysBetween(odometer.at, now));
      const daysLeft = Math.max(0, dueMeterMiles - projectedMiles) / averageDailyMiles;
      forecastMoves = daysLeft === 0 || odometer.at.getTime() > nowTime;
      forecast = Math.trunc(nowTime + daysLeft * msPerDay); // whole milliseconds, as a Date keeps them
    }
  }
  if (timeDue === null && dueMilesRemaining === null) return null;

  const distanceFirst = forecast !== null && (timeDue === null || forecast < timeDue);
  const dueAt = distanceFirst ? forecast : timeDue;
  const basis = distanceFirst || timeDue === null ? 'distance' : 'time';

  const overdue = (dueMilesRemaining !== null && dueMilesRemaining <= 0) || (timeDue !== null && nowTime >= timeDue);
  const dueSoon =
    (dueMilesRemaining !== null && dueMilesRemaining <= interval.soonMiles) ||
    (dueAt !== null && (dueAt - nowTime) / msPerDay <= interval.soonDays);
  const changesAtMs = earliestAfter(nowTime, [
    timeDue,
    dueAt === null ? null : dueAt - interval.soonDays * msPerDay,
    forecast,
    forecastMoves ? nextUtcMidnightMs(nowTime) : null,
  ]);
  return {
    status: overdue ? 'overdue' : dueSoon ? 'due_soon' : 'upcoming',
    dueAt,
    dueMilesRemaining,
    basis,
    changesAtMs,
  };
}
