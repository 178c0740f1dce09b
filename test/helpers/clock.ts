/**
 * A clock frozen in the middle of the current minute, for tests that count requests in the
 * per-key rate limit's one-minute windows: every request of the test falls in one window, however
 * late in a minute the file happens to load.
 */
export function midMinuteClock(): () => Date {
  const minuteMs = 60_000;
  const frozen = new Date(Math.floor(Date.now() / minuteMs) * minuteMs + minuteMs / 2);
  return () => frozen;
}
