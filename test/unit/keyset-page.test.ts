import { describe, expect, it } from 'vitest';
import {
  decodeCursor,
  encodeCursor,
  exactTimeCursor,
  pageOf,
  parseExactTimeCursor,
} from '../../src/domain/keyset-page.js';

const id = (n: number) => String(n);

describe('keyset pages', () => {
  it('round-trips a cursor and refuses anything else', () => {
    const cursor = encodeCursor(['2026-11-26T10:00:00.000Z', '42']);
    expect(decodeCursor(cursor, 2)).toEqual(['2026-11-26T10:00:00.000Z', '42']);
    expect(decodeCursor(cursor, 1)).toBeNull();
    expect(decodeCursor('not a cursor!', 2)).toBeNull();
    expect(decodeCursor(encodeCursor(['', 'x']), 2)).toBeNull();
  });

  it('reads one extra row to know whether there is more in the direction read', () => {
    // Rows newest first; a limit of 3 with 4 fetched has a next page.
    const first = pageOf([9, 8, 7, 6], { direction: 'next', cursor: null, limit: 3 }, id);
    expect(first).toEqual({ rows: [9, 8, 7], next: '7', previous: null });
    const last = pageOf([6, 5], { direction: 'next', cursor: '7', limit: 3 }, id);
    expect(last).toEqual({ rows: [6, 5], next: null, previous: '6' });
    // Going back from 6: the extra row is the newest one, above the page.
    const back = pageOf([10, 9, 8, 7], { direction: 'previous', cursor: '6', limit: 3 }, id);
    expect(back).toEqual({ rows: [9, 8, 7], next: '7', previous: '9' });
  });

  it('has no links on an empty list', () => {
    expect(pageOf([], { direction: 'next', cursor: null, limit: 3 }, id)).toEqual({
      rows: [],
      next: null,
      previous: null,
    });
  });

  it('takes an exact time cursor only in its one form, at a time the calendar has', () => {
    const rowId = '0b7e3f9a-1c2d-4e5f-8a9b-0c1d2e3f4a5b';
    const at = '2026-11-26T10:00:00.123456Z';
    expect(parseExactTimeCursor(exactTimeCursor(at, rowId))).toEqual({ at, id: rowId });
    expect(parseExactTimeCursor(null)).toBeNull();
    for (const [time, key] of [
      ['2026-02-30T00:00:00.000000Z', rowId],
      ['2026-01-01T25:00:00.000000Z', rowId],
      ['2026-11-26 10:00:00.123456+00', rowId],
      ['2026-11-26T10:00:00.123Z', rowId],
      [at, 'not-a-uuid'],
    ] as const)
      expect(parseExactTimeCursor(exactTimeCursor(time, key)), time).toBeNull();
  });
});
