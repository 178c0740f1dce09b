import { describe, expect, it } from 'vitest';
import { milesToKm } from '../../../src/domain/units.js';
import { defaultHealthConfig, type HealthConfig, type MaintenanceInterval } from '../../../src/domain/health-config.js';
import { addMonths, daysBetween, isoDate } from '../../../src/health/dates.js';
import { computeMaintenanceDue, estimateOdometerKmAt } from '../../../src/health/maintenance.js';
import { maintenanceDueRule } from '../../../src/health/rules/maintenance-due.js';
import type { RuleInput } from '../../../src/health/types.js';
import { expectNoChangeBeforeRecheck } from '../../helpers/rule-harness.js';

const day = 24 * 60 * 60 * 1000;
const d = (iso: string) => new Date(iso);

function defaults(type: string): MaintenanceInterval {
  const interval = defaultHealthConfig.maintenance[type];
  if (!interval) throw new Error(`no default interval ${type}`);
  return interval;
}

function interval(overrides: Partial<MaintenanceInterval>): MaintenanceInterval {
  return { ...defaults('oil_change'), ...overrides };
}

/** An odometer reading in miles (the trusted odometer is km). */
function odo(miles: number, at: Date) {
  return { km: milesToKm(miles), at };
}

describe('dates', () => {
  it('addMonths clamps to the end of shorter months, in UTC, keeping the time of day', () => {
    expect(addMonths(d('2026-01-31T10:30:00Z'), 1).toISOString()).toBe('2026-02-28T10:30:00.000Z');
    expect(addMonths(d('2028-01-31T10:30:00Z'), 1).toISOString()).toBe('2028-02-29T10:30:00.000Z');
    expect(addMonths(d('2026-08-31T00:00:00Z'), 6).toISOString()).toBe('2027-02-28T00:00:00.000Z');
    expect(addMonths(d('2027-08-31T00:00:00Z'), 6).toISOString()).toBe('2028-02-29T00:00:00.000Z');
    expect(addMonths(d('2028-02-29T23:59:59.999Z'), 12).toISOString()).toBe('2029-02-28T23:59:59.999Z');
    expect(addMonths(d('2028-02-29T12:00:00Z'), 48).toISOString()).toBe('2032-02-29T12:00:00.000Z');
    expect(addMonths(d('2026-11-30T08:00:00Z'), 3).toISOString()).toBe('2027-02-28T08:00:00.000Z');
    expect(addMonths(d('2026-03-31T08:00:00Z'), -1).toISOString()).toBe('2026-02-28T08:00:00.000Z');
    expect(addMonths(d('2026-01-15T08:00:00Z'), 36).toISOString()).toBe('2029-01-15T08:00:00.000Z');
  });

  it('isoDate is the UTC date and daysBetween is fractional', () => {
    expect(isoDate(d('2026-12-31T23:59:59Z'))).toBe('2026-12-31');
    expect(isoDate(d('2027-02-05T00:00:00Z'))).toBe('2027-02-05');
    // Four-digit years from the fields, the others as toISOString writes them.
    for (const at of [
      '0999-01-01T00:00:00Z',
      '1000-01-01T00:00:00Z',
      '9999-12-31T23:59:59Z',
      '+010000-01-01T00:00:00Z',
    ])
      expect(isoDate(d(at))).toBe(d(at).toISOString().slice(0, 10));
    expect(daysBetween(d('2026-01-01T00:00:00Z'), d('2026-01-02T12:00:00Z'))).toBe(1.5);
    expect(daysBetween(d('2026-01-02T12:00:00Z'), d('2026-01-01T00:00:00Z'))).toBe(-1.5);
  });
});

describe('computeMaintenanceDue: time', () => {
  const monthly = interval({ intervalMiles: null, intervalMonths: 1, soonDays: 14 });
  const last = { at: d('2026-01-31T09:00:00Z'), odometerKm: milesToKm(10_000) };
  const baseline = { at: d('2025-01-01T00:00:00Z'), odometerKm: null };
  const due = (now: string) =>
    computeMaintenanceDue(monthly, last, baseline, odo(99_000, d(now)), milesToKm(100), d(now));

  it('Jan 31 + 1 month is due Feb 28; the odometer plays no part in a time-only interval', () => {
    expect(due('2026-02-10T09:00:00Z')).toEqual({
      status: 'upcoming',
      dueDate: '2026-02-28',
      dueMilesRemaining: null,
      basis: 'time',
    });
  });

  it('is due soon at exactly soonDays before the due time and overdue at exactly the due time', () => {
    expect(due('2026-02-14T08:59:59.999Z')?.status).toBe('upcoming');
    expect(due('2026-02-14T09:00:00Z')?.status).toBe('due_soon');
    expect(due('2026-02-28T08:59:59.999Z')?.status).toBe('due_soon');
    expect(due('2026-02-28T09:00:00Z')).toEqual({
      status: 'overdue',
      dueDate: '2026-02-28',
      dueMilesRemaining: null,
      basis: 'time',
    });
  });

  it('Aug 31 + 6 months is Feb 28, or Feb 29 in a leap year', () => {
    const sixMonths = interval({ intervalMiles: null, intervalMonths: 6 });
    const from = (at: string) =>
      computeMaintenanceDue(sixMonths, { at: d(at), odometerKm: null }, baseline, null, null, d(at));
    expect(from('2026-08-31T00:00:00Z')?.dueDate).toBe('2027-02-28');
    expect(from('2027-08-31T00:00:00Z')?.dueDate).toBe('2028-02-29');
  });

  it('Feb 29 2028 + 12 months is due Feb 28 2029', () => {
    const yearly = interval({ intervalMiles: null, intervalMonths: 12, soonDays: 30 });
    const leap = { at: d('2028-02-29T12:00:00Z'), odometerKm: null };
    expect(computeMaintenanceDue(yearly, leap, baseline, null, null, d('2029-01-01T00:00:00Z'))).toEqual({
      status: 'upcoming',
      dueDate: '2029-02-28',
      dueMilesRemaining: null,
      basis: 'time',
    });
    expect(computeMaintenanceDue(yearly, leap, baseline, null, null, d('2029-02-28T11:59:59Z'))?.status).toBe(
      'due_soon',
    );
    expect(computeMaintenanceDue(yearly, leap, baseline, null, null, d('2029-02-28T12:00:00Z'))?.status).toBe(
      'overdue',
    );
  });
});

describe('computeMaintenanceDue: distance', () => {
  const distanceOnly = interval({ intervalMiles: 5000, intervalMonths: null, soonMiles: 500, soonDays: 14 });
  const now = d('2026-11-20T12:00:00Z');
  const last = { at: d('2026-01-01T00:00:00Z'), odometerKm: milesToKm(10_000) };
  const baseline = { at: d('2025-01-01T00:00:00Z'), odometerKm: null };
  const at = (miles: number, average: number | null = null) =>
    computeMaintenanceDue(distanceOnly, last, baseline, odo(miles, now), average, now);

  it('counts miles from the last service; exactly soonMiles is due soon, exactly the due meter is overdue', () => {
    // No average distance: no forecast, so no date, but the miles still give the status.
    expect(at(14_499)).toEqual({ status: 'upcoming', dueDate: null, dueMilesRemaining: 501, basis: 'distance' });
    expect(at(14_500)).toEqual({ status: 'due_soon', dueDate: null, dueMilesRemaining: 500, basis: 'distance' });
    expect(at(15_000)).toEqual({ status: 'overdue', dueDate: null, dueMilesRemaining: 0, basis: 'distance' });
    expect(at(15_120)).toEqual({ status: 'overdue', dueDate: null, dueMilesRemaining: -120, basis: 'distance' });
  });

  it('forecasts the date from the average daily distance', () => {
    // 1,000 mi left at 100 mi/day: 10 days, within soonDays.
    expect(at(14_000, milesToKm(100))).toEqual({
      status: 'due_soon',
      dueDate: '2026-11-30',
      dueMilesRemaining: 1000,
      basis: 'distance',
    });
    // 2,000 mi at 100 mi/day: 20 days.
    expect(at(13_000, milesToKm(100))).toEqual({
      status: 'upcoming',
      dueDate: '2026-12-10',
      dueMilesRemaining: 2000,
      basis: 'distance',
    });
    // A parked vehicle (0 km/day) has no forecast.
    expect(at(13_000, 0)?.dueDate).toBeNull();
    // Overdue by distance: the forecast is today.
    expect(at(15_300, milesToKm(100))).toEqual({
      status: 'overdue',
      dueDate: '2026-11-20',
      dueMilesRemaining: -300,
      basis: 'distance',
    });
  });

  it('cannot be computed without an odometer, or when disabled or without any limit', () => {
    expect(computeMaintenanceDue(distanceOnly, last, baseline, null, milesToKm(100), now)).toBeNull();
    expect(computeMaintenanceDue(interval({ enabled: false }), last, baseline, odo(20_000, now), null, now)).toBeNull();
    expect(
      computeMaintenanceDue(
        interval({ intervalMiles: null, intervalMonths: null }),
        last,
        baseline,
        odo(20_000, now),
        null,
        now,
      ),
    ).toBeNull();
  });
});

describe('computeMaintenanceDue: whichever comes first, with the Fleetio forecast', () => {
  const oil = defaults('oil_change'); // 5,000 mi / 6 months, due soon 500 mi / 14 days
  const last = { at: d('2026-06-01T00:00:00Z'), odometerKm: milesToKm(20_000) };
  const baseline = { at: d('2025-01-01T00:00:00Z'), odometerKm: null };
  const now = d('2026-08-01T00:00:00Z');
  // The last trusted reading is two days old: the forecast projects it to today first.
  const odometer = odo(23_000, d('2026-07-30T00:00:00Z'));
  const due = (averageMiles: number | null) =>
    computeMaintenanceDue(oil, last, baseline, odometer, averageMiles === null ? null : milesToKm(averageMiles), now);

  it('takes the forecast when the miles come first', () => {
    // Projected 23,000 + 2 × 50 = 23,100; (25,000 − 23,100) / 50 = 38 days.
    expect(due(50)).toEqual({ status: 'upcoming', dueDate: '2026-09-08', dueMilesRemaining: 2000, basis: 'distance' });
    // Projected 23,400; 1,600 / 200 = 8 days: due soon by date though 2,000 mi remain on the last reading.
    expect(due(200)).toEqual({ status: 'due_soon', dueDate: '2026-08-09', dueMilesRemaining: 2000, basis: 'distance' });
    // Projected past the due meter: the forecast is today, due soon (not overdue: no reading shows it).
    expect(due(1000)).toEqual({
      status: 'due_soon',
      dueDate: '2026-08-01',
      dueMilesRemaining: 2000,
      basis: 'distance',
    });
  });

  it('takes the time limit when it comes first or the average is unknown', () => {
    // 1,990 mi at 5 mi/day is 398 days: six months come first (Jun 1 + 6 = Dec 1).
    expect(due(5)).toEqual({ status: 'upcoming', dueDate: '2026-12-01', dueMilesRemaining: 2000, basis: 'time' });
    expect(due(null)).toEqual({ status: 'upcoming', dueDate: '2026-12-01', dueMilesRemaining: 2000, basis: 'time' });
  });
});

describe('computeMaintenanceDue: baseline without service history', () => {
  const oil = defaults('oil_change');
  const createdAt = d('2026-01-01T00:00:00Z');
  const baseline = { at: createdAt, odometerKm: null };
  const now = d('2026-03-02T00:00:00Z'); // 60 days after createdAt

  it('estimates the odometer when tracking started from the average daily distance', () => {
    // 30,000 − 60 days × 60 mi = 26,400 at createdAt; due at 31,400: 1,400 mi left, 23.3 days at 60 mi/day.
    expect(computeMaintenanceDue(oil, null, baseline, odo(30_000, now), milesToKm(60), now)).toEqual({
      status: 'upcoming',
      dueDate: '2026-03-25',
      dueMilesRemaining: 1400,
      basis: 'distance',
    });
  });

  it('estimates back from the odometer reading time, not from now', () => {
    // Read 50 days after createdAt: 30,000 − 50 × 60 = 27,000; due at 32,000.
    const result = computeMaintenanceDue(
      oil,
      null,
      baseline,
      odo(30_000, d('2026-02-20T00:00:00Z')),
      milesToKm(60),
      now,
    );
    expect(result?.dueMilesRemaining).toBe(2000);
  });

  it('without an average counts from the current odometer: a new vehicle is not thousands of miles overdue', () => {
    expect(computeMaintenanceDue(oil, null, baseline, odo(80_000, now), null, now)).toEqual({
      status: 'upcoming',
      dueDate: '2026-07-01',
      dueMilesRemaining: 5000,
      basis: 'time',
    });
  });

  it('uses a known baseline odometer as is', () => {
    const known = { at: createdAt, odometerKm: milesToKm(29_000) };
    expect(computeMaintenanceDue(oil, null, known, odo(30_000, now), milesToKm(60), now)?.dueMilesRemaining).toBe(4000);
  });

  it('a service without a meter reading is estimated the same way, from the service date', () => {
    // 29 days before the reading at 60 mi/day: 30,000 − 1,740 = 28,260; due at 33,260.
    const service = { at: d('2026-02-01T00:00:00Z'), odometerKm: null };
    const result = computeMaintenanceDue(oil, service, baseline, odo(30_000, now), milesToKm(60), now);
    expect(result?.dueMilesRemaining).toBe(3260);
    expect(result?.status).toBe('upcoming');
  });

  it('estimateOdometerKmAt never goes below zero and needs an odometer', () => {
    const at = d('2026-01-01T00:00:00Z');
    expect(estimateOdometerKmAt(at, { km: 100, at: new Date(at.getTime() + 10 * day) }, 50)).toBe(0);
    expect(estimateOdometerKmAt(at, { km: 1000, at: new Date(at.getTime() + 10 * day) }, 50)).toBe(500);
    expect(estimateOdometerKmAt(at, { km: 1000, at: new Date(at.getTime() + 10 * day) }, null)).toBe(1000);
    expect(estimateOdometerKmAt(at, null, 50)).toBeNull();
  });
});

describe('maintenanceDueRule', () => {
  function only(type: string, overrides: Partial<MaintenanceInterval> = {}): HealthConfig {
    return { ...defaultHealthConfig, maintenance: { [type]: { ...defaults(type), ...overrides } } };
  }

  function input(options: {
    lastServices?: RuleInput['vehicle']['lastServices'];
    miles: number | null;
    odometerAt?: Date;
    averageMiles?: number | null;
    createdAt?: Date;
    firstMiles?: { miles: number; at: Date };
    conflict?: boolean;
    now: Date;
  }): RuleInput {
    return {
      samples: [],
      vehicle: {
        telematicsProvider: 'samsara',
        createdAt: options.createdAt ?? d('2025-01-01T00:00:00Z'),
        lastServices: options.lastServices ?? {},
      },
      odometer: options.miles === null ? null : odo(options.miles, options.odometerAt ?? options.now),
      firstOdometer: options.firstMiles ? { km: milesToKm(options.firstMiles.miles), at: options.firstMiles.at } : null,
      linkBroken: options.conflict ? { reason: 'conflict', since: '2026-11-01T00:00:00.000Z', tracker_km: 1 } : null,
      averageDailyKm: options.averageMiles == null ? null : milesToKm(options.averageMiles),
    };
  }

  it('counts from the first trusted odometer when there is no service history', () => {
    const alerts = evaluate(
      only('oil_change'),
      input({ firstMiles: { miles: 20_000, at: d('2026-09-01T00:00:00Z') }, miles: 24_700, now }),
      now,
    );
    expect(alerts).toEqual([expect.objectContaining({ type: 'oil_change', due_miles_remaining: 300 })]);
  });

  it('reports only the time-based status while the tracker contradicts the odometer', () => {
    const lastServices = oilAt('2026-10-01T00:00:00Z', 10_000);
    expect(evaluate(only('oil_change'), input({ lastServices, miles: 20_000, now }), now)[0]).toMatchObject({
      due_miles_remaining: -5000,
    });
    expect(evaluate(only('oil_change'), input({ lastServices, miles: 20_000, conflict: true, now }), now)).toEqual([]);
  });

  /** The rule's alerts at `now`, checked to hold until the recheck time it names (rule-harness.ts). */
  const evaluate = (config: HealthConfig, ruleInput: RuleInput, now: Date) => {
    const result = maintenanceDueRule.evaluate(maintenanceDueRule.initial(), ruleInput, config, now);
    expectNoChangeBeforeRecheck(maintenanceDueRule, {}, ruleInput, config, now.getTime(), result);
    return result.alerts;
  };

  const now = d('2026-11-20T12:00:00Z');
  const oilAt = (at: string, miles: number) => ({ oil_change: { at: d(at), odometerKm: milesToKm(miles) } });

  it('due soon by miles: "Oil change due in 320 mi" at the soon severity', () => {
    const alerts = evaluate(
      only('oil_change'),
      input({ lastServices: oilAt('2026-10-01T00:00:00Z', 10_000), miles: 14_680, now }),
      now,
    );
    expect(alerts).toEqual([
      {
        key: 'oil_change',
        severity: 'low',
        type: 'oil_change',
        display_name: 'Oil change due in 320 mi',
        due_date: '2027-04-01',
        due_miles_remaining: 320,
        overdue: false,
      },
    ]);
  });

  it('due soon by date: "Oil change due by 2026-12-04"', () => {
    const at = d('2026-11-25T00:00:00Z');
    const alerts = evaluate(
      only('oil_change'),
      input({ lastServices: oilAt('2026-06-04T00:00:00Z', 10_000), miles: 11_000, now: at }),
      at,
    );
    expect(alerts).toEqual([
      {
        key: 'oil_change',
        severity: 'low',
        type: 'oil_change',
        display_name: 'Oil change due by 2026-12-04',
        due_date: '2026-12-04',
        due_miles_remaining: 4000,
        overdue: false,
      },
    ]);
  });

  it('overdue by miles: "Oil change overdue by 120 mi", escalated past 1,000 mi', () => {
    const services = oilAt('2026-10-01T00:00:00Z', 10_000);
    expect(
      evaluate(only('oil_change'), input({ lastServices: services, miles: 15_120, averageMiles: 40, now }), now),
    ).toEqual([
      {
        key: 'oil_change',
        severity: 'medium',
        type: 'oil_change',
        display_name: 'Oil change overdue by 120 mi',
        due_date: '2026-11-20',
        due_miles_remaining: -120,
        overdue: true,
      },
    ]);
    const atLimit = evaluate(only('oil_change'), input({ lastServices: services, miles: 16_000, now }), now);
    expect(atLimit.map((a) => [a.severity, a.display_name])).toEqual([['medium', 'Oil change overdue by 1000 mi']]);
    const past = evaluate(only('oil_change'), input({ lastServices: services, miles: 16_001, now }), now);
    expect(past.map((a) => [a.severity, a.display_name])).toEqual([['high', 'Oil change overdue by 1001 mi']]);
  });

  it('exactly at the due meter is overdue: "due now"', () => {
    const alerts = evaluate(
      only('oil_change'),
      input({ lastServices: oilAt('2026-10-01T00:00:00Z', 10_000), miles: 15_000, now }),
      now,
    );
    expect(alerts.map((a) => [a.severity, a.display_name, a.due_miles_remaining])).toEqual([
      ['medium', 'Oil change due now', 0],
    ]);
  });

  it('overdue by date: "Oil change overdue since 2026-11-01", escalated after more than 30 days', () => {
    const services = oilAt('2026-05-01T00:00:00Z', 10_000);
    const run = (at: string) =>
      evaluate(only('oil_change'), input({ lastServices: services, miles: 12_000, now: d(at) }), d(at));
    expect(run('2026-11-20T12:00:00Z')).toEqual([
      {
        key: 'oil_change',
        severity: 'medium',
        type: 'oil_change',
        display_name: 'Oil change overdue since 2026-11-01',
        due_date: '2026-11-01',
        due_miles_remaining: 3000,
        overdue: true,
      },
    ]);
    expect(run('2026-12-01T23:59:59Z')[0]?.severity).toBe('medium'); // 30 days
    expect(run('2026-12-02T00:00:00Z')[0]?.severity).toBe('high'); // 31 days
  });

  it('a distance-only interval without a forecast still alerts, with no due date', () => {
    const services = { engine_air_filter: { at: d('2024-01-01T00:00:00Z'), odometerKm: milesToKm(10_000) } };
    const alerts = evaluate(only('engine_air_filter'), input({ lastServices: services, miles: 40_200, now }), now);
    expect(alerts).toEqual([
      {
        key: 'engine_air_filter',
        severity: 'low',
        type: 'engine_air_filter',
        display_name: 'Engine air filter overdue by 200 mi',
        due_date: null,
        due_miles_remaining: -200,
        overdue: true,
      },
    ]);
  });

  it('no alert when upcoming or disabled', () => {
    const services = oilAt('2026-10-01T00:00:00Z', 10_000);
    expect(evaluate(only('oil_change'), input({ lastServices: services, miles: 11_000, now }), now)).toEqual([]);
    expect(
      evaluate(only('oil_change', { enabled: false }), input({ lastServices: services, miles: 30_000, now }), now),
    ).toEqual([]);
  });

  it('baseline without service history: only what the estimated distance since tracking started makes due', () => {
    const createdAt = d('2026-01-01T00:00:00Z');
    const at = d('2026-03-22T00:00:00Z'); // 80 days later
    // 30,000 − 80 × 60 = 25,200 mi at createdAt: oil due at 30,200 (200 mi, 3.3 days); tire rotation 2,700 mi left.
    const alerts = evaluate(defaultHealthConfig, input({ createdAt, miles: 30_000, averageMiles: 60, now: at }), at);
    expect(alerts).toEqual([
      {
        key: 'oil_change',
        severity: 'low',
        type: 'oil_change',
        display_name: 'Oil change due in 200 mi',
        due_date: '2026-03-25',
        due_miles_remaining: 200,
        overdue: false,
      },
    ]);
    // A service of one type resets only that type.
    const serviced = evaluate(
      defaultHealthConfig,
      input({
        createdAt,
        lastServices: oilAt('2026-03-21T00:00:00Z', 29_950),
        miles: 30_000,
        averageMiles: 60,
        now: at,
      }),
      at,
    );
    expect(serviced).toEqual([]);
  });

  it('a vehicle added yesterday with 80,000 mi and no history has nothing due', () => {
    const createdAt = d('2026-11-19T12:00:00Z');
    expect(evaluate(defaultHealthConfig, input({ createdAt, miles: 80_000, now }), now)).toEqual([]);
    // Nor without any odometer: only the time parts count, from createdAt.
    expect(evaluate(defaultHealthConfig, input({ createdAt, miles: null, now }), now)).toEqual([]);
  });

  it('is stateless', () => {
    expect(maintenanceDueRule.initial()).toEqual({});
    expect(maintenanceDueRule.name).toBe('maintenance_due');
  });
});
