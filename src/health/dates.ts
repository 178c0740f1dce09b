/**
 * UTC calendar arithmetic for the health rules. Everything is UTC so a due date never depends on
 * the server's time zone.
 */
import { msPerDay } from '../domain/units.js';

const monthDays = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Days in a UTC month; `month` may be outside 0–11 (it carries into the year, as Date.UTC does).
 * Counted, not read from a Date: the sweep asks once per maintenance interval and vehicle.
 */
function daysInMonth(year: number, month: number): number {
  const y = year + Math.floor(month / 12);
  const m = month - Math.floor(month / 12) * 12;
  if (m !== 1) return monthDays[m]!;
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28;
}

/**
 * Adds calendar months in UTC, keeping the time of day. A day that does not exist in the target
 * month is clamped to its last day (Jan 31 + 1 month = Feb 28, or Feb 29 in a leap year;
 * Feb 29 + 12 months = Feb 28), the way service schedules and the month-end convention count.
 */
export function addMonths(date: Date, months: number): Date {
  return new Date(addMonthsTime(date, months));
}

/** `addMonths` as epoch milliseconds: the sweep asks once per maintenance interval and vehicle. */
export function addMonthsTime(date: Date, months: number): number {
  const year = date.getUTCFullYear();
  const targetMonth = date.getUTCMonth() + Math.trunc(months);
  const day = Math.min(date.getUTCDate(), daysInMonth(year, targetMonth));
  const time = date.getTime();
  const timeOfDayMs = time - Math.floor(time / msPerDay) * msPerDay;
  return Date.UTC(year, targetMonth, day) + timeOfDayMs;
}

const twoDigits = (n: number) => (n < 10 ? `0${n}` : `${n}`);

/** The UTC calendar date, YYYY-MM-DD. */
export function isoDate(date: Date): string {
  const year = date.getUTCFullYear();
  // From the fields: a sixth of the cost of toISOString, which the sweep pays per interval and vehicle.
  if (!(year >= 1000 && year <= 9999)) return date.toISOString().slice(0, 10);
  return `${year}-${twoDigits(date.getUTCMonth() + 1)}-${twoDigits(date.getUTCDate())}`;
}

/** Fractional days from `a` to `b` (negative when `b` is earlier). */
export function daysBetween(a: Date, b: Date): number {
  return (b.getTime() - a.getTime()) / msPerDay;
}

/** Midnight UTC of a YYYY-MM-DD date. */
export function startOfIsoDate(day: string): Date {
  return new Date(`${day}T00:00:00.000Z`);
}
