import { describe, expect, it } from 'vitest';
import { milesToKm } from '../../../src/domain/units.js';
import { checkOdometerIntegrity, type OdometerPoint } from '../../../src/history/integrity.js';

const point = (at: string, miles: number, source = 'samsara', signal = 'odometer_km'): OdometerPoint => ({
  signal,
  source,
  at: new Date(at),
  km: milesToKm(miles),
});

describe('odometer integrity', () => {
  it('is insufficient_data with fewer than two readings', () => {
    expect(checkOdometerIntegrity([])).toEqual({ status: 'insufficient_data', flags: [] });
    expect(checkOdometerIntegrity([point('2026-01-01T00:00:00Z', 100)])).toEqual({
      status: 'insufficient_data',
      flags: [],
    });
  });

  it('is consistent for a steadily rising odometer', () => {
    const points = [0, 1, 2, 3].map((d) => point(`2026-01-0${d + 1}T12:00:00Z`, 10_000 + d * 40));
    expect(checkOdometerIntegrity(points)).toEqual({ status: 'consistent', flags: [] });
  });

  it('flags backwards with both readings and the drop in the explanation', () => {
    const result = checkOdometerIntegrity([
      point('2026-03-01T08:00:00Z', 52_000),
      point('2026-03-02T08:00:00Z', 41_000),
      point('2026-03-03T08:00:00Z', 41_050),
    ]);
    expect(result.status).toBe('flagged');
    expect(result.flags).toEqual([
      {
        rule: 'backwards',
        explanation:
          'The samsara odometer read 52,000 mi at 2026-03-01 08:00 UTC and 41,000 mi at 2026-03-02 08:00 UTC: ' +
          '11,000 miles lower. An odometer never runs backwards, so one reading is wrong or the odometer was altered.',
        readings: [
          { at: '2026-03-01T08:00:00.000Z', miles: 52_000, source: 'samsara' },
          { at: '2026-03-02T08:00:00.000Z', miles: 41_000, source: 'samsara' },
        ],
      },
    ]);
  });

  it('tolerates a drop within the tolerance (1 km: float noise and rounding)', () => {
    const result = checkOdometerIntegrity([point('2026-03-01T08:00:00Z', 1000), point('2026-03-01T09:00:00Z', 999.5)]);
    expect(result.status).toBe('consistent');
  });

  it('flags impossible_rate: more than 3,000 miles a day', () => {
    const result = checkOdometerIntegrity([
      point('2026-03-01T08:00:00Z', 10_000),
      point('2026-03-02T08:00:00Z', 15_000),
    ]);
    expect(result.flags).toHaveLength(1);
    expect(result.flags[0]).toMatchObject({
      rule: 'impossible_rate',
      readings: [{ miles: 10_000 }, { miles: 15_000 }],
    });
    expect(result.flags[0]!.explanation).toBe(
      'The samsara odometer rose 5,000 miles in 24 hours (2026-03-01 08:00 UTC to 2026-03-02 08:00 UTC), ' +
        '5,000 miles a day; no vehicle drives more than 3,000 miles a day.',
    );
  });

  it('does not flag 2,900 miles in a day, and counts a gap under an hour as an hour', () => {
    expect(
      checkOdometerIntegrity([point('2026-03-01T08:00:00Z', 10_000), point('2026-03-02T08:00:00Z', 12_900)]).status,
    ).toBe('consistent');
    // 100 miles in one minute would be 144,000 mi/day; as an hour it is 2,400 mi/day.
    expect(
      checkOdometerIntegrity([point('2026-03-01T08:00:00Z', 10_000), point('2026-03-01T08:01:00Z', 10_100)]).status,
    ).toBe('consistent');
  });

  it('flags source_conflict once per pair of sources, counting the other disagreements', () => {
    const result = checkOdometerIntegrity([
      point('2026-03-01T08:00:00Z', 30_000),
      point('2026-03-01T08:30:00Z', 22_000, 'manual'),
      point('2026-03-02T08:00:00Z', 30_050),
      point('2026-03-02T08:10:00Z', 22_010, 'manual'),
    ]);
    expect(result.flags.map((f) => f.rule)).toEqual(['source_conflict']);
    expect(result.flags[0]!.explanation).toBe(
      'The manually entered odometer read 22,000 mi at 2026-03-01 08:30 UTC while the samsara odometer read ' +
        '30,000 mi at 2026-03-01 08:00 UTC: 8,000 miles apart, and they disagree the same way at 1 more reading. ' +
        'At most one of them shows the true distance.',
    );
    expect(result.flags[0]!.readings.map((r) => r.source)).toEqual(['manual', 'samsara']);
  });

  it('needs both 250 miles and 5 % for a conflict, and readings within an hour', () => {
    // 240 miles apart: under 250.
    expect(
      checkOdometerIntegrity([point('2026-03-01T08:00:00Z', 10_000), point('2026-03-01T08:00:00Z', 10_240, 'manual')])
        .status,
    ).toBe('consistent');
    // 300 miles apart on 100,000: under 5 %.
    expect(
      checkOdometerIntegrity([point('2026-03-01T08:00:00Z', 100_000), point('2026-03-01T08:00:00Z', 100_300, 'manual')])
        .status,
    ).toBe('consistent');
    // Far apart but two hours apart in time: not compared.
    expect(
      checkOdometerIntegrity([point('2026-03-01T08:00:00Z', 10_000), point('2026-03-01T10:00:00Z', 20_000, 'manual')])
        .status,
    ).toBe('consistent');
  });

  it('compares a GPS-derived odometer with the ECU one and says which is which', () => {
    const result = checkOdometerIntegrity([
      point('2026-03-01T08:00:00Z', 40_000),
      point('2026-03-01T08:00:00Z', 1_200, 'traccar', 'gps_odometer_km'),
    ]);
    expect(result.flags[0]!.explanation).toContain(
      'The GPS-derived traccar odometer read 1,200 mi at 2026-03-01 08:00 UTC while the samsara odometer read 40,000 mi',
    );
  });

  it('orders flags by the time of their first reading', () => {
    const result = checkOdometerIntegrity([
      point('2026-03-05T08:00:00Z', 20_000),
      point('2026-03-06T08:00:00Z', 19_000),
      point('2026-03-01T08:00:00Z', 10_000, 'manual'),
      point('2026-03-01T09:00:00Z', 9_000, 'manual'),
    ]);
    expect(result.flags.map((f) => [f.rule, f.readings[0]!.source])).toEqual([
      ['backwards', 'manual'],
      ['backwards', 'samsara'],
    ]);
  });
});
