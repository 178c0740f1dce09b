import { describe, expect, it } from 'vitest';
import { expiredPartitions } from '../../src/domain/partitions.js';

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
