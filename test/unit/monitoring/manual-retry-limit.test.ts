import { describe, expect, it } from 'vitest';
import { decideManualRetry, manualRetryWindowMs } from '../../../src/monitoring/manual-retry-limit.js';

const limits = { perHour: 3, perDelivery: 5 };
const now = new Date('2026-11-24T10:00:00Z');
const minutesAgo = (m: number) => new Date(now.getTime() - m * 60_000);

describe('decideManualRetry', () => {
  it('allows a first retry and keeps its time', () => {
    expect(decideManualRetry({ total: 0, recentAt: [] }, limits, now)).toEqual({ kind: 'allowed', recentAt: [now] });
  });

  it('keeps only the last hour, oldest first, plus now', () => {
    const verdict = decideManualRetry(
      { total: 4, recentAt: [minutesAgo(10), minutesAgo(90), minutesAgo(59), minutesAgo(60)] },
      limits,
      now,
    );
    expect(verdict).toEqual({ kind: 'allowed', recentAt: [minutesAgo(59), minutesAgo(10), now] });
  });

  it('refuses the retry past the hourly limit until the oldest of the hour is an hour old', () => {
    const verdict = decideManualRetry(
      { total: 3, recentAt: [minutesAgo(5), minutesAgo(40), minutesAgo(20)] },
      limits,
      now,
    );
    expect(verdict).toEqual({ kind: 'too_frequent', retryAfterSeconds: 20 * 60 });
    // Right then, one is allowed again.
    const later = new Date(now.getTime() + 20 * 60_000);
    expect(
      decideManualRetry({ total: 3, recentAt: [minutesAgo(5), minutesAgo(40), minutesAgo(20)] }, limits, later),
    ).toMatchObject({ kind: 'allowed' });
  });

  it('with more than the limit in the hour (a lowered setting), waits until enough of them have left', () => {
    const verdict = decideManualRetry(
      { total: 4, recentAt: [minutesAgo(50), minutesAgo(40), minutesAgo(30), minutesAgo(10)] },
      { perHour: 2, perDelivery: 10 },
      now,
    );
    // One more needs at most one left in the hour: those of 50, 40 and 30 minutes ago must leave,
    // the last of them in 30 minutes.
    expect(verdict).toEqual({ kind: 'too_frequent', retryAfterSeconds: 30 * 60 });
  });

  it('refuses for good once the lifetime limit is used, whatever the hour', () => {
    expect(decideManualRetry({ total: 5, recentAt: [] }, limits, now)).toEqual({ kind: 'exhausted' });
    expect(
      decideManualRetry({ total: 5, recentAt: [minutesAgo(1), minutesAgo(2), minutesAgo(3)] }, limits, now),
    ).toEqual({ kind: 'exhausted' });
  });

  it('counts a retry exactly an hour old as gone', () => {
    const atEdge = new Date(now.getTime() - manualRetryWindowMs);
    expect(
      decideManualRetry({ total: 3, recentAt: [atEdge, minutesAgo(1), minutesAgo(2)] }, limits, now),
    ).toMatchObject({ kind: 'allowed' });
  });
});
