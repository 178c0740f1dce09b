import { describe, expect, it } from 'vitest';
import { FailedAuthLimiter } from '../../../src/api/failed-auth-limiter.js';

describe('failed-auth limiter', () => {
  it('blocks an address after max failures until its window ends; other addresses are unaffected', () => {
    const limiter = new FailedAuthLimiter(3, 60_000);
    const t0 = 1_000_000;
    for (let i = 0; i < 3; i++) {
      expect(limiter.blockedFor('198.51.100.1', t0 + i)).toBe(0);
      limiter.recordFailure('198.51.100.1', t0 + i);
    }
    expect(limiter.blockedFor('198.51.100.1', t0 + 10)).toBe(60_000 - 10);
    expect(limiter.blockedFor('198.51.100.2', t0 + 10)).toBe(0);
    expect(limiter.blockedFor('198.51.100.1', t0 + 60_000)).toBe(0);
    limiter.recordFailure('198.51.100.1', t0 + 60_000);
    expect(limiter.blockedFor('198.51.100.1', t0 + 60_001)).toBe(0);
  });

  it('forgets everything rather than grow past the addresses it may track', () => {
    const limiter = new FailedAuthLimiter(1, 60_000, 2);
    limiter.recordFailure('a', 0);
    limiter.recordFailure('b', 0);
    expect(limiter.blockedFor('a', 1)).toBeGreaterThan(0);
    limiter.recordFailure('c', 1);
    expect(limiter.blockedFor('a', 2)).toBe(0);
    expect(limiter.blockedFor('c', 2)).toBeGreaterThan(0);
  });
});
