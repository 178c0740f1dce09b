/**
 * Cursor ("keyset") paging for lists shown newest first: a page is the rows next to a cursor row,
 * found by an index range scan rather than an offset, so rows added meanwhile never shift a page
 * or show a row twice. 'next' reads further down the list (older rows), 'previous' back up.
 */
import { isRecordId } from './ids.js';

export type PageDirection = 'next' | 'previous';

export interface PageRequest {
  direction: PageDirection;
  /** The cursor of the row the page starts after (opaque; from `encodeCursor`), or null for the top. */
  cursor: string | null;
  limit: number;
}

export interface Page<T> {
  rows: T[];
  /** The cursor for the next page, or null when this page is the last. */
  next: string | null;
  /** The cursor for the previous page, or null when this page is the first. */
  previous: string | null;
}

/** A cursor names one row by its sort key: its values joined, base64url so a URL carries it as is. */
export function encodeCursor(parts: readonly string[]): string {
  return Buffer.from(parts.join('\n'), 'utf8').toString('base64url');
}

/** The parts of a cursor, or null when it is not one of `count` parts (a hand-edited URL). */
export function decodeCursor(cursor: string, count: number): string[] | null {
  if (!/^[A-Za-z0-9_-]{1,400}$/.test(cursor)) return null;
  const parts = Buffer.from(cursor, 'base64url').toString('utf8').split('\n');
  return parts.length === count && parts.every((p) => p.length > 0) ? parts : null;
}

/**
 * The page from the rows a list statement gave for `request` with `limit + 1` asked for (newest
 * first either way): the extra row only says there is more in the direction read. The other
 * direction has more whenever the request started from a cursor.
 */
export function pageOf<T>(fetched: readonly T[], request: PageRequest, cursorOf: (row: T) => string): Page<T> {
  const more = fetched.length > request.limit;
  const rows =
    request.direction === 'next' ? fetched.slice(0, request.limit) : fetched.slice(more ? 1 : 0, request.limit + 1);
  const first = rows[0];
  const last = rows[rows.length - 1];
  const fromCursor = request.cursor !== null;
  const hasNext = request.direction === 'next' ? more : fromCursor;
  const hasPrevious = request.direction === 'next' ? fromCursor : more;
  return {
    rows,
    next: hasNext && last !== undefined ? cursorOf(last) : null,
    previous: hasPrevious && first !== undefined ? cursorOf(first) : null,
  };
}

/**
 * Reads the page `request` asks for through `fetch` (a list statement, rows newest first). A
 * 'previous' page that reaches the top of the list comes back as the full first page instead
 * of the few rows left above the cursor.
 */
export async function readPage<T>(
  request: PageRequest,
  fetch: (direction: PageDirection, cursor: string | null, limit: number) => Promise<T[]>,
  cursorOf: (row: T) => string,
): Promise<Page<T>> {
  const fetched = await fetch(request.direction, request.cursor, request.limit + 1);
  if (request.direction === 'previous' && fetched.length <= request.limit) {
    const top = { direction: 'next', cursor: null, limit: request.limit } as const;
    return pageOf(await fetch('next', null, request.limit + 1), top, cursorOf);
  }
  return pageOf(fetched, request, cursorOf);
}

/** The cursor of a row ordered by (time, id). */
export function timeCursor(at: Date, id: string): string {
  return encodeCursor([at.toISOString(), id]);
}

/** The (time, id) a cursor names, or null when it is not one: the list then starts at the top. */
export function parseTimeCursor(cursor: string | null): { at: Date; id: string } | null {
  const parts = cursor === null ? null : decodeCursor(cursor, 2);
  if (!parts) return null;
  const [at, id] = parts as [string, string];
  return Number.isNaN(Date.parse(at)) || id.length > 40 ? null : { at: new Date(at), id };
}

/** The form of an exact cursor time: UTC to the microsecond (src/db/cursor-time.ts). */
const exactTime = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/**
 * The cursor of a row ordered by (time, id), its time to the microsecond as the statement gave it
 * (src/db/cursor-time.ts), so the statement compares it with the column as stored, through its
 * index; a Date would cut it to the millisecond.
 */
export function exactTimeCursor(at: string, id: string): string {
  return encodeCursor([at, id]);
}

/** The (exact time, id) a cursor names, or null when it is not one: the list then starts at the top. */
export function parseExactTimeCursor(cursor: string | null): { at: string; id: string } | null {
  const parts = cursor === null ? null : decodeCursor(cursor, 2);
  if (!parts) return null;
  const [at, id] = parts as [string, string];
  if (!exactTime.test(at) || !isRecordId(id)) return null;
  // A time the calendar has (no 30 February, no hour 25): Postgres would refuse any other.
  const toMs = `${at.slice(0, 23)}Z`;
  const parsed = new Date(toMs);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString() === toMs ? { at, id } : null;
}
