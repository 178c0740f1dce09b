/** UTC calendar months (YYYY-MM), the period usage is counted and priced in. */

export const monthPattern = '^[0-9]{4}-(0[1-9]|1[0-2])$';

/** The UTC month `at` falls in, YYYY-MM. */
export function monthOf(at: Date): string {
  return at.toISOString().slice(0, 7);
}

/** [starts, ends) of a YYYY-MM month, in UTC. */
export function monthBounds(month: string): { starts: Date; ends: Date } {
  const [year, index] = month.split('-').map(Number) as [number, number];
  return { starts: new Date(Date.UTC(year, index - 1, 1)), ends: new Date(Date.UTC(year, index, 1)) };
}

/** The ledger's `month` column: the month's first day. */
export function monthFirstDay(month: string): string {
  return `${month}-01`;
}

/** How much of the month is gone at `now`: 0 before it starts, 1 once it has ended. */
export function elapsedFraction(month: string, now: Date): number {
  const { starts, ends } = monthBounds(month);
  const fraction = (now.getTime() - starts.getTime()) / (ends.getTime() - starts.getTime());
  return Math.min(1, Math.max(0, fraction));
}

/** Every day of the month up to `now` (all of it for a past month), YYYY-MM-DD. */
export function daysOfMonthThrough(month: string, now: Date): string[] {
  const { starts, ends } = monthBounds(month);
  const days: string[] = [];
  for (let day = starts; day < ends && day <= now; day = new Date(day.getTime() + 86_400_000)) {
    days.push(day.toISOString().slice(0, 10));
  }
  return days;
}
