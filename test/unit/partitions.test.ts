import { describe, expect, it } from 'vitest';
import { expiredDayPartitions, expiredPartitions } from '../../src/domain/partitions.js';

const months = ['2025-10-01', '2025-11-01', '2025-12-01', '2026-01-01'].map((month) => ({ month }));

describe('expiredPartitions', () => {
  it('drops a month once it ended the retention in whole months before the current one', () => {
    const now = new Date('2026-11-24T10:00:00Z');
    expect(expiredPartitions(months, now, 12).map((p) => p.month)).toEqual(['2025-10-01']);
    expect(expiredPartitions(months, now, 11).map((p) => p.month)).toEqual(['2025-10-01', '2025-11-01']);
    // The first instant of a month counts as that month.
    expect(expiredPartitions(months, new Date('2026-12-01T00:00:00Z'), 12).map((p) => p.month)).toEqual([
      '2025-10-01',
      '2025-11-01',
    ]);
  });

  it('keeps everything with retention 0', () => {
    expect(expiredPartitions(months, new Date('2040-01-01Z'), 0)).toEqual([]);
  });
});

describe('expiredDayPartitions', () => {
  const days = ['2026-11-17', '2026-11-18', '2026-11-19', '2026-11-26'].map((day) => ({ day }));

  it('drops a day once it ended more than the retention ago', () => {
    // 7 days before 2026-11-26T10:00 is 2026-11-19T10:00: the 18th ended before it, the 19th did not.
    expect(expiredDayPartitions(days, new Date('2026-11-26T10:00:00Z'), 7).map((p) => p.day)).toEqual([
      '2026-11-17',
      '2026-11-18',
    ]);
    // The 19th ends at the first instant of the 20th.
    expect(expiredDayPartitions(days, new Date('2026-11-27T00:00:00Z'), 7).map((p) => p.day)).toEqual([
      '2026-11-17',
      '2026-11-18',
      '2026-11-19',
    ]);
  });
});
