import { describe, expect, it } from 'vitest';
import { advanceRotation, currentWindow, readRotation } from '../../../providers/feeds.js';

const feeds = ['a', 'b', 'c'] as const;

describe('feed rotation behind one cursor', () => {
  it('starts at the first feed; a cursor that is not a rotation is the first feed position', () => {
    expect(readRotation(null, feeds)).toEqual({ feed: 'a', position: null, index: 0, cursors: {} });
    expect(readRotation('plain-cursor', feeds)).toMatchObject({ feed: 'a', position: 'plain-cursor' });
    expect(readRotation('{"not":"a rotation"}', feeds)).toMatchObject({ feed: 'a', position: '{"not":"a rotation"}' });
    // A feed index out of range (a client lost a feed) starts the round over.
    expect(readRotation('{"feed":7,"cursors":{"a":"x"}}', feeds)).toMatchObject({ feed: 'a', position: 'x' });
  });

  it('stays on a feed with more pages, moves on otherwise, and ends the round at the wrap', () => {
    const start = readRotation(null, feeds);
    const more = advanceRotation(start, feeds, 'a1', true);
    expect(more).toEqual({ nextCursor: '{"feed":0,"cursors":{"a":"a1"}}', hasMore: true });
    const next = advanceRotation(readRotation(more.nextCursor, feeds), feeds, 'a2', false);
    expect(next).toEqual({ nextCursor: '{"feed":1,"cursors":{"a":"a2"}}', hasMore: true });
    const last = advanceRotation(readRotation('{"feed":2,"cursors":{"a":"a2","b":"b1"}}', feeds), feeds, null, false);
    // A null position is not stored; the round wraps to the first feed and this pull is over.
    expect(last).toEqual({ nextCursor: '{"feed":0,"cursors":{"a":"a2","b":"b1"}}', hasMore: false });
    // Positions of feeds a client no longer has are dropped.
    const dropped = advanceRotation(readRotation('{"feed":0,"cursors":{"gone":"g"}}', feeds), feeds, 'a1', false);
    expect(JSON.parse(dropped.nextCursor).cursors).toEqual({ a: 'a1' });
  });

  it('opens time windows: an hour back first, then overlapping the last by the overlap, never past now', () => {
    const now = new Date('2026-05-04T15:00:00Z');
    const options = { firstLookbackMs: 3_600_000, overlapMs: 600_000 };
    expect(currentWindow(null, now, options)).toEqual({
      since: '2026-05-04T14:00:00.000Z',
      until: '2026-05-04T15:00:00.000Z',
      page: null,
    });
    const done = { since: '2026-05-04T13:00:00.000Z', until: '2026-05-04T14:30:00.000Z', page: null };
    expect(currentWindow(done, now, options)).toEqual({
      since: '2026-05-04T14:20:00.000Z',
      until: '2026-05-04T15:00:00.000Z',
      page: null,
    });
    expect(currentWindow({ ...done, page: 'p2' }, now, options)).toEqual({ ...done, page: 'p2' });
    // A window stored with a future end (a clock that moved back) starts from now.
    const future = { since: '2026-05-04T15:00:00.000Z', until: '2026-05-04T18:00:00.000Z', page: null };
    expect(currentWindow(future, now, options).since).toBe('2026-05-04T14:50:00.000Z');
    expect(currentWindow({ since: 'garbage', until: 3 }, now, options).since).toBe('2026-05-04T14:00:00.000Z');
  });
});
