import { describe, expect, it } from 'vitest';
import { nextHitRate, probeFirst } from '../../../src/api/by-id-read-policy.js';

const after = (hitRate: number, reads: boolean[]) => reads.reduce(nextHitRate, hitRate);

describe('by-id read policy', () => {
  it('probes first while hits are the majority, loads at once while misses are', () => {
    expect([probeFirst(1), probeFirst(0.5), probeFirst(0.49), probeFirst(0)]).toEqual([true, true, false, false]);
  });

  it('follows the recent reads: a run of misses turns probing off within ~16 reads, a run of hits back on', () => {
    const misses = (n: number) => Array<boolean>(n).fill(false);
    const hits = (n: number) => Array<boolean>(n).fill(true);
    expect(probeFirst(after(1, misses(10)))).toBe(true);
    expect(probeFirst(after(1, misses(11)))).toBe(false);
    const missing = after(1, misses(200));
    expect(missing).toBeLessThan(0.01);
    expect(probeFirst(after(missing, hits(10)))).toBe(false);
    expect(probeFirst(after(missing, hits(11)))).toBe(true);
  });

  it('stays within [0, 1] and settles at the share of hits when they alternate', () => {
    const alternating = Array.from({ length: 400 }, (_, i) => i % 2 === 0);
    const rate = after(1, alternating);
    expect(rate).toBeGreaterThan(0.45);
    expect(rate).toBeLessThan(0.55);
    expect(after(1, Array<boolean>(1000).fill(true))).toBe(1);
    expect(after(0, Array<boolean>(1000).fill(false))).toBe(0);
  });
});
