import { describe, expect, it } from 'vitest';
import { afterAttempt, type DeliveryProgress } from '../../../src/monitoring/delivery-schedule.js';

const delays = [60_000, 300_000, 900_000];
const now = new Date('2026-11-24T10:00:00Z');
const later = (ms: number) => new Date(now.getTime() + ms);

describe('afterAttempt', () => {
  it('schedules the retries after 1, 5 and 15 minutes, and fails after the 4th scheduled attempt', () => {
    let progress: DeliveryProgress = { status: 'pending', scheduledAttempts: 0 };
    const next: Array<Date | null> = [];
    for (let i = 0; i < 4; i++) {
      const result = afterAttempt(progress, { trigger: 'scheduled', outcome: 'failed' }, delays, now);
      next.push(result.nextAttemptAt);
      progress = result;
    }
    expect(next).toEqual([later(60_000), later(300_000), later(900_000), null]);
    expect(progress).toMatchObject({ status: 'failed', scheduledAttempts: 4, completed: true });
  });

  it('a 2xx ends it at any attempt', () => {
    expect(
      afterAttempt(
        { status: 'retrying', scheduledAttempts: 2 },
        { trigger: 'scheduled', outcome: 'succeeded' },
        delays,
        now,
      ),
    ).toEqual({ status: 'succeeded', scheduledAttempts: 3, nextAttemptAt: null, completed: true });
  });

  it('a send lost with its worker counts as the scheduled attempt it was', () => {
    expect(
      afterAttempt(
        { status: 'retrying', scheduledAttempts: 3 },
        { trigger: 'scheduled', outcome: 'worker_lost' },
        delays,
        now,
      ),
    ).toMatchObject({ status: 'failed', scheduledAttempts: 4, nextAttemptAt: null });
  });

  it('manual and recover attempts never use up the schedule; a failure leaves a finished delivery as it was', () => {
    expect(
      afterAttempt({ status: 'failed', scheduledAttempts: 4 }, { trigger: 'manual', outcome: 'failed' }, delays, now),
    ).toMatchObject({ status: 'failed', scheduledAttempts: 4, nextAttemptAt: null });
    expect(
      afterAttempt(
        { status: 'failed', scheduledAttempts: 4 },
        { trigger: 'recover', outcome: 'succeeded' },
        delays,
        now,
      ),
    ).toMatchObject({ status: 'succeeded', scheduledAttempts: 4 });
    expect(
      afterAttempt(
        { status: 'succeeded', scheduledAttempts: 1 },
        { trigger: 'manual', outcome: 'failed' },
        delays,
        now,
      ),
    ).toMatchObject({ status: 'succeeded', nextAttemptAt: null });
    // While retries remain, a failed manual attempt restarts the wait before the next scheduled one.
    expect(
      afterAttempt({ status: 'retrying', scheduledAttempts: 2 }, { trigger: 'manual', outcome: 'failed' }, delays, now),
    ).toMatchObject({ status: 'retrying', scheduledAttempts: 2, nextAttemptAt: later(300_000) });
    // Before the initial attempt, a failed manual one leaves the initial owed at once.
    expect(
      afterAttempt({ status: 'pending', scheduledAttempts: 0 }, { trigger: 'manual', outcome: 'failed' }, delays, now),
    ).toMatchObject({ status: 'pending', scheduledAttempts: 0, nextAttemptAt: now });
  });

  it('a final failure (subscription deleted) owes nothing more', () => {
    expect(
      afterAttempt(
        { status: 'pending', scheduledAttempts: 0 },
        { trigger: 'scheduled', outcome: 'failed', final: true },
        delays,
        now,
      ),
    ).toMatchObject({ status: 'failed', nextAttemptAt: null, completed: true });
  });
});
