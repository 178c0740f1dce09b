/**
 * A timestamptz column as text: UTC, to the microsecond, at a fixed width whatever the session's
 * TimeZone. Two compare in time order as text, and one goes back into a statement as is, so a
 * later statement starts exactly there (a lane claim's `from`; a page cursor's time,
 * `exactTimeCursor` in src/domain/keyset-page.ts). A JavaScript Date would cut it to the millisecond.
 */
export function cursorTimeOf(column: string): string {
  return `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
}
