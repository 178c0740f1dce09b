/**
 * Several provider feeds behind the one cursor a connection stores. A provider whose data comes
 * from more than one endpoint (Samsara's stats feeds of at most 3 types each, Geotab's GetFeed per
 * entity type, Motive's locations, faults and events) keeps each feed's own position in one JSON
 * cursor, `{"feed": <index of the feed to pull next>, "cursors": {"<feed>": <its position>}}`,
 * and pulls one page of one feed at a time. A feed with more pages ready stays current; otherwise
 * the next feed is, and one scheduled pull ends when the round wraps to the first feed again.
 * Pure: the clients do the HTTP.
 */
import { isObject, parseJson } from './values.js';

export interface Rotation {
  /** The feed to pull now. */
  feed: string;
  /** Its stored position; null when it starts from its default. */
  position: unknown;
  /** Everything stored, to write the next cursor from. */
  index: number;
  cursors: Record<string, unknown>;
}

/**
 * Reads a stored cursor. A cursor that is not a rotation is the position of the first feed: what
 * a connection stored before its provider had more than one feed stays valid.
 */
export function readRotation(cursor: string | null, feeds: readonly string[]): Rotation {
  const parsed = cursor === null ? null : parseJson(cursor);
  const value = parsed?.ok ? parsed.value : null;
  if (isObject(value) && isObject(value.cursors) && typeof value.feed === 'number') {
    const index = Number.isInteger(value.feed) && value.feed >= 0 && value.feed < feeds.length ? value.feed : 0;
    const feed = feeds[index]!;
    return { feed, position: value.cursors[feed] ?? null, index, cursors: value.cursors };
  }
  const cursors: Record<string, unknown> = cursor === null ? {} : { [feeds[0]!]: cursor };
  return { feed: feeds[0]!, position: cursors[feeds[0]!] ?? null, index: 0, cursors };
}

/**
 * The cursor after one page of `rotation.feed`: its new position stored, and the feed to pull
 * next. `more` says whether to pull again now (more pages of this feed, or feeds left this round).
 */
export function advanceRotation(
  rotation: Rotation,
  feeds: readonly string[],
  position: unknown,
  feedHasMore: boolean,
): { nextCursor: string; hasMore: boolean } {
  const next = feedHasMore ? rotation.index : (rotation.index + 1) % feeds.length;
  const cursors: Record<string, unknown> = {};
  // Only the known feeds are kept: a feed dropped from a client leaves nothing behind.
  for (const feed of feeds) {
    const value = feed === rotation.feed ? position : rotation.cursors[feed];
    if (value !== null && value !== undefined) cursors[feed] = value;
  }
  return { nextCursor: JSON.stringify({ feed: next, cursors }), hasMore: feedHasMore || next !== 0 };
}

/** A time window of an endpoint that has no change feed, only `start`/`end` (plus paging inside one window). */
export interface TimeWindow {
  since: string;
  until: string;
  /** The provider's page cursor or page number inside the window; null: the first page. */
  page: string | null;
}

/**
 * The window to ask for now. A new window starts `overlapMs` before the previous one ended, because
 * providers publish such records late (events are stored once whatever the overlap); the first
 * window looks back `firstLookbackMs`.
 */
export function currentWindow(
  position: unknown,
  now: Date,
  options: { firstLookbackMs: number; overlapMs: number },
): TimeWindow {
  if (
    isObject(position) &&
    typeof position.since === 'string' &&
    typeof position.until === 'string' &&
    Number.isFinite(Date.parse(position.since)) &&
    Number.isFinite(Date.parse(position.until))
  ) {
    if (typeof position.page === 'string') return { since: position.since, until: position.until, page: position.page };
    const since = new Date(Math.min(Date.parse(position.until), now.getTime()) - options.overlapMs);
    return { since: since.toISOString(), until: now.toISOString(), page: null };
  }
  return {
    since: new Date(now.getTime() - options.firstLookbackMs).toISOString(),
    until: now.toISOString(),
    page: null,
  };
}
