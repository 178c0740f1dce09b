import { describe, expect, it } from 'vitest';
import { defaultHealthConfig } from '../../../src/domain/health-config.js';
import { averageDailyKm, evaluateLink, initialLinkState } from '../../../src/health/rules/link-broken.js';
import { type LinkState } from '../../../src/domain/health.js';
import type { RuleSample } from '../../../src/domain/sample.js';

const config = defaultHealthConfig;
const provider = 'samsara';
const hour = 60 * 60 * 1000;
const day = 24 * hour;
const t0 = new Date('2026-11-01T08:00:00.000Z');
const after = (ms: number) => new Date(t0.getTime() + ms);

function reading(km: number, recordedAt: Date, source = provider, signal = 'odometer_km'): RuleSample {
  return { signal, recordedAt, value: km, source };
}

/** Feeds samples one evaluation each, the way the worker does; `now` = the last sample's time. */
function feed(state: LinkState, samples: RuleSample[], now?: Date) {
  let result = evaluateLink(state, [], provider, config, now ?? t0);
  for (const sample of samples) {
    result = evaluateLink(result.state, [sample], provider, config, now ?? sample.recordedAt);
  }
  return result;
}

/** Trusted 10,000 km at t0 from the tracker. */
function baseline() {
  return feed(initialLinkState(), [reading(10_000, t0)]).state;
}

describe('link: no_reading', () => {
  it('reports no_reading until the first provider odometer, then a healthy link', () => {
    const empty = evaluateLink(initialLinkState(), [], provider, config, t0);
    expect(empty.linkBroken).toEqual({ reason: 'no_reading', since: null, tracker_km: null });
    expect(empty.odometer).toBeNull();

    const first = evaluateLink(empty.state, [reading(12_345.6, t0)], provider, config, t0);
    expect(first.linkBroken).toBeNull();
    expect(first.odometer).toEqual({ km: 12_345.6, at: t0, source: provider });
    expect(first.state.trusted).toEqual({ km: 12_345.6, at: t0.toISOString(), source: provider });
    expect(first.state.lastTracker).toEqual({ km: 12_345.6, at: t0.toISOString() });
  });

  it('a manual reading gives an odometer but is not a tracker reading', () => {
    const result = evaluateLink(initialLinkState(), [reading(500, t0, 'manual')], provider, config, t0);
    expect(result.odometer).toEqual({ km: 500, at: t0, source: 'manual' });
    expect(result.linkBroken).toEqual({ reason: 'no_reading', since: null, tracker_km: null });
  });

  it('counts gps_odometer_km and ignores other signals and non-numeric values', () => {
    const ignored = evaluateLink(
      initialLinkState(),
      [
        { signal: 'fuel_percent', recordedAt: t0, value: 50, source: provider },
        { signal: 'odometer_km', recordedAt: t0, value: '123', source: provider },
        { signal: 'odometer_km', recordedAt: t0, value: Number.NaN, source: provider },
      ],
      provider,
      config,
      t0,
    );
    expect(ignored.linkBroken?.reason).toBe('no_reading');
    const gps = evaluateLink(ignored.state, [reading(42, t0, provider, 'gps_odometer_km')], provider, config, t0);
    expect(gps.odometer?.km).toBe(42);
    expect(gps.linkBroken).toBeNull();
  });

  it('ignores a reading dated more than a day in the future', () => {
    const result = evaluateLink(initialLinkState(), [reading(100, after(day + 1))], provider, config, t0);
    expect(result.linkBroken?.reason).toBe('no_reading');
    expect(result.odometer).toBeNull();
  });
});

describe('link: stale', () => {
  it('is stale only after more than 7 days, since the last tracker reading, and clears on a new reading', () => {
    const state = baseline();
    expect(evaluateLink(state, [], provider, config, after(7 * day)).linkBroken).toBeNull();
    const stale = evaluateLink(state, [], provider, config, after(7 * day + 1));
    expect(stale.linkBroken).toEqual({ reason: 'stale', since: t0.toISOString(), tracker_km: null });
    // The trusted odometer is still reported while stale.
    expect(stale.odometer).toEqual({ km: 10_000, at: t0, source: provider });

    const fresh = evaluateLink(stale.state, [reading(10_100, after(8 * day))], provider, config, after(8 * day));
    expect(fresh.linkBroken).toBeNull();
  });

  it('a manual reading does not refresh a stale tracker', () => {
    const state = baseline();
    const result = evaluateLink(state, [reading(10_500, after(9 * day), 'manual')], provider, config, after(9 * day));
    expect(result.odometer?.km).toBe(10_500);
    expect(result.linkBroken).toEqual({ reason: 'stale', since: t0.toISOString(), tracker_km: null });
  });
});

describe('link: conflict', () => {
  it('needs two consecutive backwards readings; the conflicting readings never become trusted', () => {
    const one = feed(baseline(), [reading(9_990, after(hour))]);
    expect(one.linkBroken).toBeNull();
    expect(one.state.candidates).toBe(1);
    expect(one.odometer).toEqual({ km: 10_000, at: t0, source: provider });

    const two = feed(one.state, [reading(9_989, after(2 * hour))]);
    expect(two.linkBroken).toEqual({ reason: 'conflict', since: t0.toISOString(), tracker_km: 9_989 });
    expect(two.odometer).toEqual({ km: 10_000, at: t0, source: provider });

    const three = feed(two.state, [reading(9_995, after(3 * hour))]);
    expect(three.linkBroken).toEqual({ reason: 'conflict', since: t0.toISOString(), tracker_km: 9_995 });
    expect(three.state.trusted?.km).toBe(10_000);
  });

  it('a consistent reading between two backwards ones resets the count', () => {
    const result = feed(baseline(), [
      reading(9_990, after(hour)),
      reading(10_010, after(2 * hour)),
      reading(9_990, after(3 * hour)),
    ]);
    expect(result.linkBroken).toBeNull();
    expect(result.state.candidates).toBe(1);
    expect(result.odometer?.km).toBe(10_010);
  });

  it('a reading within the backwards tolerance (1 km) is consistent and trusted', () => {
    const result = feed(baseline(), [reading(9_999.2, after(hour)), reading(9_999.1, after(2 * hour))]);
    expect(result.linkBroken).toBeNull();
    expect(result.odometer?.km).toBe(9_999.1);
  });

  it('is immediate when the tracker is more than 50 km behind', () => {
    const result = feed(baseline(), [reading(9_949, after(hour))]);
    expect(result.linkBroken).toEqual({ reason: 'conflict', since: t0.toISOString(), tracker_km: 9_949 });
    expect(result.odometer?.km).toBe(10_000);
    // Exactly 50 km back is not immediate.
    expect(feed(baseline(), [reading(9_950, after(hour))]).linkBroken).toBeNull();
  });

  it('an impossible rate (more than 4,828 km/day) is a candidate, at least one hour apart', () => {
    // 5,000 km in a day.
    const fast = feed(baseline(), [reading(15_000, after(day))]);
    expect(fast.state.candidates).toBe(1);
    expect(fast.odometer?.km).toBe(10_000);
    const conflict = feed(fast.state, [reading(15_200, after(day + hour))]);
    expect(conflict.linkBroken).toEqual({ reason: 'conflict', since: t0.toISOString(), tracker_km: 15_200 });

    // 4,000 km in a day is possible (long-haul team driving).
    expect(feed(baseline(), [reading(14_000, after(day))]).state.candidates).toBe(0);
    // 250 km five minutes later is judged over an hour: 6,000 km/day.
    expect(feed(baseline(), [reading(10_250, after(5 * 60_000))]).state.candidates).toBe(1);
    // 150 km five minutes later over an hour is 3,600 km/day: accepted (jitter of short gaps).
    expect(feed(baseline(), [reading(10_150, after(5 * 60_000))]).state.candidates).toBe(0);
  });

  it('clears after two consecutive consistent readings', () => {
    const conflict = feed(baseline(), [reading(9_900, after(hour))]);
    expect(conflict.linkBroken?.reason).toBe('conflict');

    const one = feed(conflict.state, [reading(10_020, after(2 * hour))]);
    expect(one.linkBroken).toEqual({ reason: 'conflict', since: t0.toISOString(), tracker_km: 9_900 });
    expect(one.odometer?.km).toBe(10_020);
    expect(one.state.consistentInConflict).toBe(1);

    // A conflicting reading in between restarts the count.
    const again = feed(one.state, [reading(9_905, after(3 * hour)), reading(10_030, after(4 * hour))]);
    expect(again.linkBroken?.reason).toBe('conflict');
    expect(again.state.consistentInConflict).toBe(1);

    const cleared = feed(again.state, [reading(10_040, after(5 * hour))]);
    expect(cleared.linkBroken).toBeNull();
    expect(cleared.state.conflict).toBeNull();
    expect(cleared.state.consistentInConflict).toBe(0);
    expect(cleared.odometer?.km).toBe(10_040);
  });

  it('clears at once on a manual anchor, which re-baselines to the tracker', () => {
    // The tracker was swapped and now counts from 2,000 km: every reading conflicts.
    const conflict = feed(baseline(), [reading(2_000, after(hour)), reading(2_010, after(2 * hour))]);
    expect(conflict.linkBroken).toEqual({ reason: 'conflict', since: t0.toISOString(), tracker_km: 2_010 });

    const anchored = feed(conflict.state, [reading(2_015, after(3 * hour), 'manual')]);
    expect(anchored.linkBroken).toBeNull();
    expect(anchored.odometer).toEqual({ km: 2_015, at: after(3 * hour), source: 'manual' });
    expect(anchored.state.candidates).toBe(0);
    expect(anchored.state.conflict).toBeNull();

    // Tracker readings now agree with the new anchor.
    const next = feed(anchored.state, [reading(2_030, after(4 * hour))]);
    expect(next.linkBroken).toBeNull();
    expect(next.odometer?.km).toBe(2_030);
  });

  it('a service reading is an anchor too', () => {
    const conflict = feed(baseline(), [reading(9_000, after(hour))]);
    const anchored = feed(conflict.state, [reading(9_001, after(2 * hour), 'service')]);
    expect(anchored.linkBroken).toBeNull();
    expect(anchored.odometer?.source).toBe('service');
  });

  it('conflict outranks stale', () => {
    const conflict = feed(baseline(), [reading(9_000, after(hour))]);
    const later = evaluateLink(conflict.state, [], provider, config, after(30 * day));
    expect(later.linkBroken).toEqual({ reason: 'conflict', since: t0.toISOString(), tracker_km: 9_000 });
  });
});

describe('link: out of order and manual vehicles', () => {
  it('a provider reading older than the trusted odometer is ignored', () => {
    const state = feed(initialLinkState(), [reading(10_000, after(2 * hour), 'manual')]).state;
    const result = evaluateLink(state, [reading(9_000, after(hour))], provider, config, after(2 * hour));
    expect(result.odometer).toEqual({ km: 10_000, at: after(2 * hour), source: 'manual' });
    expect(result.state.candidates).toBe(0);
    expect(result.state.conflict).toBeNull();
    // It still shows the tracker reports.
    expect(result.state.lastTracker).toEqual({ km: 9_000, at: after(hour).toISOString() });
    expect(result.linkBroken).toBeNull();

    // An older reading never moves lastTracker back either.
    const newer = evaluateLink(baseline(), [reading(9_999, after(-hour))], provider, config, t0);
    expect(newer.state.lastTracker).toEqual({ km: 10_000, at: t0.toISOString() });
    expect(newer.odometer?.km).toBe(10_000);
  });

  it('a manually tracked vehicle never has link_broken, whatever the state', () => {
    expect(evaluateLink(initialLinkState(), [], null, config, t0).linkBroken).toBeNull();
    const conflict = feed(baseline(), [reading(9_000, after(hour))]).state;
    expect(conflict.conflict).not.toBeNull();
    const manual = evaluateLink(conflict, [], null, config, after(60 * day));
    expect(manual.linkBroken).toBeNull();
    expect(manual.odometer?.km).toBe(10_000);
  });

  it('state is plain JSON', () => {
    const state = feed(baseline(), [reading(9_000, after(hour)), reading(10_050, after(day))]).state;
    expect(JSON.parse(JSON.stringify(state))).toEqual(state);
  });
});

describe('link: daily distance', () => {
  it('keeps the last trusted km of each UTC day', () => {
    const result = feed(initialLinkState(), [
      reading(1_000, new Date('2026-11-01T08:00:00Z')),
      reading(1_040, new Date('2026-11-01T20:00:00Z')),
      reading(1_100, new Date('2026-11-02T09:00:00Z')),
      reading(1_050, new Date('2026-11-02T10:00:00Z')), // candidate: not trusted, not recorded
    ]);
    expect(result.state.daily).toEqual([
      { day: '2026-11-01', km: 1_040 },
      { day: '2026-11-02', km: 1_100 },
    ]);
  });

  it('averages the distance over the days between the oldest and newest entries', () => {
    const samples = Array.from({ length: 11 }, (_, i) => reading(5_000 + 80 * i, after(i * day)));
    const { state } = feed(initialLinkState(), samples);
    expect(state.daily).toHaveLength(11);
    expect(averageDailyKm(state, after(10 * day))).toBe(80);
    // A gap: two readings 4 days apart.
    const gap = feed(initialLinkState(), [reading(100, t0), reading(300, after(4 * day))]).state;
    expect(averageDailyKm(gap, after(4 * day))).toBe(50);
  });

  it('is null with fewer than two days', () => {
    expect(averageDailyKm(initialLinkState(), t0)).toBeNull();
    const oneDay = feed(initialLinkState(), [reading(100, t0), reading(150, after(2 * hour))]).state;
    expect(averageDailyKm(oneDay, after(2 * hour))).toBeNull();
  });

  it('keeps 31 days: older days are dropped from the state and the average', () => {
    const samples = Array.from({ length: 41 }, (_, i) =>
      reading(1_000 + 10 * i + (i >= 20 ? 10 * (i - 20) : 0), after(i * day)),
    );
    const now = after(40 * day);
    const { state } = feed(initialLinkState(), samples);
    expect(state.daily).toHaveLength(31);
    expect(state.daily[0]).toEqual({ day: '2026-11-11', km: 1_100 });
    expect(state.daily[30]).toEqual({ day: '2026-12-11', km: 1_600 });
    // (1,600 − 1,100) km over 30 days.
    expect(averageDailyKm(state, now)).toBeCloseTo(500 / 30, 10);
    // Without further readings the window slides: 29 days later only the last two days are left…
    expect(averageDailyKm(state, after(69 * day))).toBe(20);
    // …and 30 days later only the last one.
    expect(averageDailyKm(state, after(70 * day))).toBeNull();
  });

  it('a manual correction downwards restarts the daily history', () => {
    const { state } = feed(initialLinkState(), [
      reading(1_000, t0),
      reading(1_100, after(day)),
      reading(900, after(2 * day), 'manual'),
    ]);
    expect(state.daily).toEqual([{ day: '2026-11-03', km: 900 }]);
    expect(averageDailyKm(state, after(2 * day))).toBeNull();
  });
});

describe('link: first trusted odometer', () => {
  it('keeps the first trusted reading as the maintenance baseline, and resets it with a correcting anchor', () => {
    const state = feed(initialLinkState(), [
      reading(10_000, t0),
      reading(10_050, after(hour)),
      reading(10_120, after(2 * hour)),
    ]).state;
    expect(state.first).toEqual({ km: 10_000, at: t0.toISOString() });
    const corrected = feed(state, [reading(9_000, after(3 * hour), 'manual')]).state;
    expect(corrected.first).toEqual({ km: 9_000, at: after(3 * hour).toISOString() });
    // A state stored before `first` existed takes the next trusted reading.
    const { first: _omitted, ...legacy } = state;
    expect(feed(legacy as LinkState, [reading(10_200, after(4 * hour))]).state.first).toEqual({
      km: 10_200,
      at: after(4 * hour).toISOString(),
    });
  });
});
