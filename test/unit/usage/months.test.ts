/** UTC months: where a moment falls, a month's bounds, elapsed share and days (docs/pricing.md). */
import { describe, expect, it } from 'vitest';
import { daysOfMonthThrough, elapsedFraction, monthBounds, monthOf } from '../../../src/usage/months.js';

describe('UTC months', () => {
  it('places the last millisecond of a month in it and the next in the next', () => {
    expect(monthOf(new Date('2026-11-30T23:59:59.999Z'))).toBe('2026-11');
    expect(monthOf(new Date('2026-12-01T00:00:00.000Z'))).toBe('2026-12');
    // 23:30 on 31 December in New York is already January in UTC.
    expect(monthOf(new Date('2026-12-31T23:30:00-05:00'))).toBe('2027-01');
  });

  it('bounds a month, across a year end and a leap February', () => {
    expect(monthBounds('2026-12')).toEqual({
      starts: new Date('2026-12-01T00:00:00Z'),
      ends: new Date('2027-01-01T00:00:00Z'),
    });
    expect(monthBounds('2028-02').ends).toEqual(new Date('2028-03-01T00:00:00Z'));
  });

  it('measures the elapsed share, 0 before and 1 after', () => {
    expect(elapsedFraction('2026-11', new Date('2026-10-31T00:00:00Z'))).toBe(0);
    expect(elapsedFraction('2026-11', new Date('2026-11-16T00:00:00Z'))).toBe(0.5);
    expect(elapsedFraction('2026-11', new Date('2026-12-05T00:00:00Z'))).toBe(1);
  });

  it('lists the days through now, or all of a past month', () => {
    expect(daysOfMonthThrough('2026-11', new Date('2026-11-03T10:00:00Z'))).toEqual([
      '2026-11-01',
      '2026-11-02',
      '2026-11-03',
    ]);
    expect(daysOfMonthThrough('2028-02', new Date('2028-06-01T00:00:00Z'))).toHaveLength(29);
  });
});
