/**
 * Text for the report PDF: dates in UTC spelled the same on every machine (no locale or time zone
 * of the server leaks in, so the bytes stay deterministic), miles with thousands separators, and
 * one sign for "no value".
 */

const monthNames = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** Shown where the report holds null: a blank cell would read as "forgot to fill in". */
export const noValue = '—';

const wholeNumber = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const oneDecimal = new Intl.NumberFormat('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 });

/** `2025-03-04` or a full ISO 8601 time → `Mar 4, 2025` (the UTC calendar day). */
export function formatDate(isoDateOrTime: string): string {
  const date = new Date(isoDateOrTime.length === 10 ? `${isoDateOrTime}T00:00:00Z` : isoDateOrTime);
  if (Number.isNaN(date.getTime())) return isoDateOrTime;
  return `${monthNames[date.getUTCMonth()]} ${date.getUTCDate()}, ${date.getUTCFullYear()}`;
}

/** ISO 8601 time → `Mar 4, 2025 14:05 UTC`. */
export function formatDateTime(isoTime: string): string {
  const date = new Date(isoTime);
  if (Number.isNaN(date.getTime())) return isoTime;
  const hh = String(date.getUTCHours()).padStart(2, '0');
  const mm = String(date.getUTCMinutes()).padStart(2, '0');
  return `${formatDate(isoTime)} ${hh}:${mm} UTC`;
}

/** `2025-03` → `Mar 2025`. */
export function formatMonth(month: string): string {
  const [year, monthNumber] = month.split('-');
  const name = monthNames[Number(monthNumber) - 1];
  return name && year ? `${name} ${year}` : month;
}

/** `2025-03` → `Mar`, or `Mar 2025` where the axis needs the year (first label, new year). */
export function formatMonthTick(month: string, withYear: boolean): string {
  const [year, monthNumber] = month.split('-');
  const name = monthNames[Number(monthNumber) - 1] ?? month;
  return withYear ? `${name} ${year}` : name;
}

/**
 * A time axis tick, as short as its neighbour allows: `2025` on New Year's Day; `Apr` on the first
 * of a month (`Apr 2025` when the previous tick is in another year or there is none); else the day,
 * `Oct 18` (`Oct 18, 2026` likewise).
 */
export function formatTimeTick(tick: Date, previous?: Date): string {
  const sameYear = previous !== undefined && previous.getUTCFullYear() === tick.getUTCFullYear();
  const month = monthNames[tick.getUTCMonth()];
  if (tick.getUTCDate() === 1 && tick.getUTCMonth() === 0) return String(tick.getUTCFullYear());
  if (tick.getUTCDate() === 1) return sameYear ? `${month}` : `${month} ${tick.getUTCFullYear()}`;
  return sameYear ? `${month} ${tick.getUTCDate()}` : formatDate(tick.toISOString());
}

export function formatMiles(miles: number | null): string {
  return miles === null ? noValue : `${wholeNumber.format(miles)} mi`;
}

export function formatCount(value: number | null): string {
  return value === null ? noValue : wholeNumber.format(value);
}

export function formatDecimal(value: number | null, unit = ''): string {
  return value === null ? noValue : `${oneDecimal.format(value)}${unit}`;
}

export function formatYesNo(value: boolean): string {
  return value ? 'Yes' : 'No';
}

/** `impossible_rate` → `Impossible rate`: enum values shown as words. */
export function humanize(value: string): string {
  const words = value.replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}
