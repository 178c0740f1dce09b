/**
 * `Date.prototype.toISOString`, counted from the time value: V8's builtin costs about 1 µs a call,
 * and the health stage turns every watermark, tracker reading and trusted odometer into one
 * (some 700,000 per first sweep of 100,000 vehicles). This one costs a fifth of that.
 */
const msPerDay = 86_400_000;

const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`);
const pad3 = (n: number) => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);

/** The same string as `date.toISOString()` (which it calls outside years 1000–9999 and for an invalid date). */
export function isoTimestamp(date: Date): string {
  const time = date.getTime();
  // 1000-01-01 and 10000-01-01: four-digit years, no sign.
  if (!(time >= -30_610_224_000_000 && time < 253_402_300_800_000)) return date.toISOString();
  const days = Math.floor(time / msPerDay);
  const msOfDay = time - days * msPerDay;
  // Civil date from days since 1970-01-01 (H. Hinnant, "chrono-Compatible Low-Level Date Algorithms").
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const shiftedMonth = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * shiftedMonth + 2) / 5) + 1;
  const month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  const hours = Math.floor(msOfDay / 3_600_000);
  const minutes = Math.floor(msOfDay / 60_000) % 60;
  const seconds = Math.floor(msOfDay / 1000) % 60;
  return `${year}-${pad2(month)}-${pad2(day)}T${pad2(hours)}:${pad2(minutes)}:${pad2(seconds)}.${pad3(msOfDay % 1000)}Z`;
}
