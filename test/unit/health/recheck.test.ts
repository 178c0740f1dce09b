import { describe, expect, it } from 'vitest';
import { defaultHealthConfig } from '../../../src/domain/health-config.js';
import type { RuleSample } from '../../../src/domain/sample.js';
import { msPerDay } from '../../../src/domain/units.js';
import { evaluateVehicleHealth, type HealthEvaluation } from '../../../src/health/evaluate.js';
import {
  earliestAfter,
  fullEvaluationShare,
  fullEvaluationSweeps,
  nextUtcMidnightMs,
  sweepIntervalMs,
} from '../../../src/health/recheck.js';

const now = new Date('2026-11-20T12:00:00.000Z');
const daysAgo = (days: number) => new Date(now.getTime() - days * msPerDay);
const odometer = (km: number, at: Date): RuleSample => ({
  signal: 'odometer_km',
  recordedAt: at,
  value: km,
  source: 'samsara',
});
const vehicle = { telematicsProvider: 'samsara', createdAt: daysAgo(400), lastServices: {} };

/** One evaluation of `samples` at `now`, then what the same state gives at `at` with nothing new. */
function evaluated(samples: RuleSample[]) {
  const first = evaluateVehicleHealth(null, samples, vehicle, defaultHealthConfig, now, true);
  const later = (at: number) =>
    evaluateVehicleHealth(first.state, [], vehicle, defaultHealthConfig, new Date(at), true);
  return { first, later };
}

const visible = (evaluation: HealthEvaluation) => ({ health: evaluation.health, linkBroken: evaluation.linkBroken });

describe('recheck times', () => {
  it('earliestAfter: the earliest time after now; times at or before it, and nulls, name nothing', () => {
    expect(earliestAfter(100, [null, 90, 100, 300, 200])).toBe(200);
    expect(earliestAfter(100, [null, 100])).toBeNull();
    expect(nextUtcMidnightMs(now.getTime())).toBe(Date.parse('2026-11-21T00:00:00.000Z'));
    expect(nextUtcMidnightMs(Date.parse('2026-11-21T00:00:00.000Z'))).toBe(Date.parse('2026-11-22T00:00:00.000Z'));
  });

  it('the sweeps of an hour take every share of full evaluations once', () => {
    const shares = Array.from({ length: fullEvaluationSweeps }, (_, i) =>
      fullEvaluationShare(now.getTime() + i * sweepIntervalMs),
    );
    expect(new Set(shares).size).toBe(fullEvaluationSweeps);
    expect(fullEvaluationSweeps * sweepIntervalMs).toBe(60 * 60 * 1000);
  });

  it('a tracker going stale: nothing changes before the recheck time, the link is stale at it', () => {
    const { first, later } = evaluated([odometer(50_000, daysAgo(6.5))]);
    expect(first.linkBroken).toBeNull();
    const staleAt = daysAgo(6.5).getTime() + 7 * msPerDay + 1;
    // The maintenance intervals counted from 400 days ago name no earlier time.
    expect(first.recheckAtMs).toBe(staleAt);
    expect(visible(later(staleAt - 1))).toEqual(visible(first));
    expect(later(staleAt).linkBroken).toMatchObject({ reason: 'stale' });
  });

  it('the oldest day leaving the 30-day window is a recheck time (the average moves the forecasts)', () => {
    const { first } = evaluated([odometer(50_000, daysAgo(29.6)), odometer(52_000, daysAgo(0.5))]);
    const oldestDay = Date.parse(daysAgo(29.6).toISOString().slice(0, 10));
    expect(first.recheckAtMs).toBe(oldestDay + 31 * msPerDay);
  });

  it('over a fleet of odometer histories, health and link hold until each vehicle’s recheck time', () => {
    for (let days = 1; days <= 40; days += 3) {
      for (const kmPerDay of [0, 15, 80, 400]) {
        const samples = [odometer(40_000, daysAgo(days + 20)), odometer(40_000 + kmPerDay * 20, daysAgo(days))];
        const { first, later } = evaluated(samples);
        const recheck = first.recheckAtMs ?? now.getTime() + 365 * msPerDay;
        expect(recheck).toBeGreaterThan(now.getTime());
        const before = [now.getTime() + 1, Math.floor((now.getTime() + recheck) / 2), recheck - 1];
        for (const at of before.filter((time) => time > now.getTime() && time < recheck)) {
          expect(
            visible(later(at)),
            `${days} days ago at ${kmPerDay} km/day, at ${new Date(at).toISOString()}`,
          ).toEqual(visible(first));
        }
      }
    }
  });
});
