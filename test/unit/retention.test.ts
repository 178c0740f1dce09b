import { describe, expect, it } from 'vitest';
import { retentionCutoff } from '../../src/domain/retention.js';

describe('retentionCutoff', () => {
  const now = new Date('2031-06-10T12:00:00Z');
  it.each([
    [0, null],
    [1, '2031-06-09T12:00:00.000Z'],
    [30, '2031-05-11T12:00:00.000Z'],
    [365, '2030-06-10T12:00:00.000Z'],
  ])('%i days keep rows from %s on', (days, cutoff) => {
    expect(retentionCutoff(now, days)?.toISOString() ?? null).toBe(cutoff);
  });
});
