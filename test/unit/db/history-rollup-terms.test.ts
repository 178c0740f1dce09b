import { describe, expect, it } from 'vitest';
import { rollupTerms } from '../../../src/db/history-rollups.js';
import type { ReadingRow } from '../../../src/db/readings.js';

const car = '00000000-0000-4000-8000-000000000001';
const van = '00000000-0000-4000-8000-000000000002';

function reading(
  vehicleId: string,
  signal: string,
  at: string,
  value: number | string,
  source = 'generic',
): ReadingRow {
  const numeric = typeof value === 'number';
  return {
    vehicleId,
    signal,
    recordedAt: new Date(at),
    valueNum: numeric ? value : null,
    valueJson: numeric ? null : value,
    source,
  };
}

describe('rollupTerms', () => {
  it('keeps first, last, lowest and highest odometer per vehicle, UTC day, signal and source, whatever the order', () => {
    const terms = rollupTerms([
      reading(car, 'odometer_km', '2026-11-21T10:00:00Z', 105),
      reading(car, 'odometer_km', '2026-11-21T08:00:00Z', 100),
      reading(car, 'odometer_km', '2026-11-21T12:00:00Z', 103),
      reading(car, 'odometer_km', '2026-11-21T23:59:59Z', 110),
      reading(car, 'odometer_km', '2026-11-22T00:00:00Z', 111),
      reading(car, 'gps_odometer_km', '2026-11-21T09:00:00Z', 99),
      reading(car, 'odometer_km', '2026-11-21T09:00:00Z', 101, 'manual'),
    ])!;
    expect(terms.odometer).toHaveLength(4);
    expect(terms.odometer[0]).toEqual({
      v: car,
      day: '2026-11-21',
      s: 'odometer_km',
      o: 'generic',
      first_at: new Date('2026-11-21T08:00:00Z'),
      first_km: 100,
      last_at: new Date('2026-11-21T23:59:59Z'),
      last_km: 110,
      min_km: 100,
      max_km: 110,
      readings: 4,
    });
    expect(terms.odometer.map((o) => [o.day, o.s, o.o, o.readings])).toEqual([
      ['2026-11-21', 'odometer_km', 'generic', 4],
      ['2026-11-22', 'odometer_km', 'generic', 1],
      ['2026-11-21', 'gps_odometer_km', 'generic', 1],
      ['2026-11-21', 'odometer_km', 'manual', 1],
    ]);
  });

  it('counts speed samples, moving (8 km/h and up) and highway (88 km/h and up) ones, and sums moving speeds', () => {
    const terms = rollupTerms(
      [0, 7.9, 8, 50, 88, 120, -1].map((kph, i) => reading(car, 'speed_kph', `2026-11-21T08:00:0${i}Z`, kph)),
    )!;
    expect(terms.speed).toEqual([
      {
        v: car,
        day: '2026-11-21',
        speed_samples: 6,
        moving_samples: 4,
        highway_samples: 2,
        moving_kph_sum: 8 + 50 + 88 + 120,
      },
    ]);
  });

  it('counts a trip at on or idle after off inside the batch, and leaves a vehicle’s first state to the database', () => {
    const states: Array<[string, string, string]> = [
      [car, '2026-11-21T08:00:00Z', 'on'],
      [car, '2026-11-21T08:30:00Z', 'off'],
      [car, '2026-11-21T09:00:00Z', 'idle'],
      [car, '2026-11-21T09:10:00Z', 'on'],
      [car, '2026-11-22T07:00:00Z', 'off'],
      [car, '2026-11-22T08:00:00Z', 'on'],
      [van, '2026-11-21T06:00:00Z', 'off'],
      [van, '2026-11-21T07:00:00Z', 'on'],
    ];
    // Out of order on purpose: the batch's states are taken in time order per vehicle.
    const terms = rollupTerms(states.reverse().map(([v, at, state]) => reading(v, 'engine_state', at, state)))!;
    expect(terms.trips).toEqual(
      expect.arrayContaining([
        { v: car, day: '2026-11-21', trips: 1 },
        { v: car, day: '2026-11-22', trips: 1 },
        { v: van, day: '2026-11-21', trips: 1 },
      ]),
    );
    expect(terms.trips).toHaveLength(3);
    expect(terms.first_trips).toEqual([{ v: car, day: '2026-11-21', t: new Date('2026-11-21T08:00:00Z') }]);
  });

  it('has nothing to add without the rolled-up signals', () => {
    expect(rollupTerms([reading(car, 'fuel_percent', '2026-11-21T08:00:00Z', 40)])).toBeNull();
    expect(rollupTerms([])).toBeNull();
  });
});
