import { describe, expect, it } from 'vitest';
import type { DrivingDay, OdometerDay, OdometerReadingRow } from '../../../src/db/history.js';
import { milesToKm } from '../../../src/domain/units.js';
import {
  assembleHistoryReport,
  rangeStart,
  vehiclePredictions,
  type HistoryInput,
} from '../../../src/history/assemble.js';
import { daysToInspect } from '../../../src/history/odometer-series.js';
import { reportTiers } from '../../../src/history/types.js';

const now = new Date('2026-11-24T12:00:00Z');
const vehicleA = '00000000-0000-4000-8000-00000000000a';
const vehicleB = '00000000-0000-4000-8000-00000000000b';
const companyX = '00000000-0000-4000-8000-0000000000c1';
const companyY = '00000000-0000-4000-8000-0000000000c2';

/** A checkpoint whose first reading is at 08:00 and last at 18:00 of the day. */
function day(date: string, firstMiles: number, lastMiles: number, extra: Partial<OdometerDay> = {}): OdometerDay {
  return {
    vehicleId: vehicleA,
    day: date,
    signal: 'odometer_km',
    source: 'samsara',
    firstAt: new Date(`${date}T08:00:00Z`),
    firstKm: milesToKm(firstMiles),
    lastAt: new Date(`${date}T18:00:00Z`),
    lastKm: milesToKm(lastMiles),
    minKm: milesToKm(Math.min(firstMiles, lastMiles)),
    maxKm: milesToKm(Math.max(firstMiles, lastMiles)),
    readings: 2,
    ...extra,
  };
}

function driving(date: string, extra: Partial<DrivingDay> = {}): DrivingDay {
  return {
    vehicleId: vehicleA,
    day: date,
    speedSamples: 100,
    movingSamples: 80,
    highwaySamples: 20,
    movingKphSum: 80 * 64.37376, // 40 mph on average
    trips: 2,
    hardBrakes: 0,
    hardAccels: 0,
    ...extra,
  };
}

function input(overrides: Partial<HistoryInput> = {}): HistoryInput {
  return {
    vin: '1HGCM82633A004352',
    tier: 'basic',
    reportId: 'rpt_1',
    now,
    vinModelYear: 2003,
    vehicles: [
      { id: vehicleA, make: 'Honda', model: 'Accord', year: null, createdAt: new Date('2024-01-01Z'), signals: {} },
    ],
    ownerships: [{ vehicleId: vehicleA, companyId: companyX, startedAt: new Date('2024-01-01Z'), endedAt: null }],
    odometerDays: [],
    dayReadings: [],
    drivingDays: [],
    runs: [],
    serviceEntries: [],
    incidentEvents: [],
    ...overrides,
  };
}

describe('report tiers', () => {
  it.each([
    ['basic', '2026-05-24T12:00:00.000Z'],
    ['standard', '2025-11-24T12:00:00.000Z'],
    ['comprehensive', '2023-11-24T12:00:00.000Z'],
    ['lifetime', null],
  ] as const)('%s covers data from %s', (tier, from) => {
    expect(rangeStart(tier, now)?.toISOString() ?? null).toBe(from);
    expect(assembleHistoryReport(input({ tier })).data_range).toEqual({ from, to: now.toISOString() });
  });

  it('includes the sections of each tier: null outside it, [] when empty inside it', () => {
    const sections = Object.fromEntries(
      reportTiers.map((tier) => {
        const r = assembleHistoryReport(input({ tier }));
        return [
          tier,
          {
            service_history: r.service_history,
            incidents: r.incidents,
            ownership: r.ownership === null ? null : 'present',
            telematics: r.telematics,
            predictive_insights: r.predictive_insights === null ? null : 'present',
          },
        ];
      }),
    );
    expect(sections).toEqual({
      basic: { service_history: [], incidents: null, ownership: null, telematics: null, predictive_insights: null },
      standard: {
        service_history: [],
        incidents: [],
        ownership: 'present',
        telematics: null,
        predictive_insights: null,
      },
      comprehensive: {
        service_history: [],
        incidents: [],
        ownership: 'present',
        telematics: { monthly_mileage: [], odometer_timeline: [] },
        predictive_insights: null,
      },
      lifetime: {
        service_history: [],
        incidents: [],
        ownership: 'present',
        telematics: { monthly_mileage: [], odometer_timeline: [] },
        predictive_insights: 'present',
      },
    });
  });

  it('leaves out records before the tier range: a 2025 service is in standard, not in basic', () => {
    const serviceEntries = [
      { vehicleId: vehicleA, type: 'oil_change', performedAt: new Date('2026-01-10T10:00:00Z'), odometerKm: null },
      { vehicleId: vehicleA, type: 'tire_rotation', performedAt: new Date('2026-09-10T10:00:00Z'), odometerKm: null },
    ];
    expect(assembleHistoryReport(input({ serviceEntries })).service_history.map((s) => s.type)).toEqual([
      'tire_rotation',
    ]);
    expect(
      assembleHistoryReport(input({ tier: 'standard', serviceEntries })).service_history.map((s) => s.type),
    ).toEqual(['oil_change', 'tire_rotation']);
  });

  it('reports the vehicle with the VIN model year when no row has one', () => {
    expect(assembleHistoryReport(input()).vehicle).toEqual({ make: 'Honda', model: 'Accord', year: 2003, trim: null });
  });

  it('has insufficient_data integrity with no odometer readings, in every tier', () => {
    for (const tier of reportTiers) {
      expect(assembleHistoryReport(input({ tier })).odometer_integrity).toEqual({
        status: 'insufficient_data',
        flags: [],
      });
    }
  });
});

describe('lifetime metrics', () => {
  const odometerDays = [
    day('2026-06-01', 10_000, 10_040),
    day('2026-09-01', 13_000, 13_040),
    day('2026-11-20', 16_000, 16_040),
  ];

  it('measures total miles, first record, miles per year, speed and highway share from the rollups', () => {
    const report = assembleHistoryReport(
      input({
        odometerDays,
        drivingDays: [driving('2026-06-01', { hardBrakes: 3, hardAccels: 2 }), driving('2026-09-01')],
      }),
    );
    expect(report.lifetime_metrics).toEqual({
      total_miles: 16_040,
      first_recorded: '2026-06-01',
      // 6,040 miles over 172.4 days.
      avg_miles_per_year: Math.round(6_040 / ((172 * 24 + 10) / (365.25 * 24))),
      // 100 − (5·3 + 3·2) / 6,040 × 100 = 99.65.
      driving_score: 100,
      harsh_braking_events: 3,
      rapid_acceleration_events: 2,
      avg_speed: 40,
      highway_percentage: 25,
    });
  });

  it('scores 100 − Σ weight × events per 100 miles, and null below 100 miles', () => {
    const days = [day('2026-10-01', 1_000, 1_100), day('2026-10-02', 1_100, 1_200)];
    const score = (hardBrakes: number, hardAccels: number, odometer = days) =>
      assembleHistoryReport(
        input({ odometerDays: odometer, drivingDays: [driving('2026-10-01', { hardBrakes, hardAccels })] }),
      ).lifetime_metrics.driving_score;
    expect(score(0, 0)).toBe(100);
    expect(score(2, 0)).toBe(95); // 2 brakes per 200 mi = 1 per 100 mi × 5
    expect(score(4, 2)).toBe(87); // (20 + 6) / 200 × 100 = 13
    expect(score(100, 0)).toBe(0);
    expect(score(0, 0, [day('2026-10-01', 1_000, 1_050)])).toBeNull();
  });
});

describe('within-day drops', () => {
  it('asks for the raw readings of a day whose low or high is outside its first and last', () => {
    const steady = day('2026-10-01', 1_000, 1_100);
    const dipped = day('2026-10-02', 1_100, 1_200, { minKm: milesToKm(900) });
    const peaked = day('2026-10-03', 1_200, 1_300, { maxKm: milesToKm(1_500) });
    expect(daysToInspect([steady, dipped, peaked])).toEqual([
      { vehicleId: vehicleA, day: '2026-10-02' },
      { vehicleId: vehicleA, day: '2026-10-03' },
    ]);
  });

  it('explains the drop with the raw readings of that day and marks them in the timeline', () => {
    const dayReadings: OdometerReadingRow[] = [
      {
        vehicleId: vehicleA,
        signal: 'odometer_km',
        source: 'samsara',
        at: new Date('2026-10-02T08:00:00Z'),
        km: milesToKm(1_100),
      },
      {
        vehicleId: vehicleA,
        signal: 'odometer_km',
        source: 'samsara',
        at: new Date('2026-10-02T12:00:00Z'),
        km: milesToKm(1_150),
      },
      {
        vehicleId: vehicleA,
        signal: 'odometer_km',
        source: 'samsara',
        at: new Date('2026-10-02T13:00:00Z'),
        km: milesToKm(900),
      },
      {
        vehicleId: vehicleA,
        signal: 'odometer_km',
        source: 'samsara',
        at: new Date('2026-10-02T18:00:00Z'),
        km: milesToKm(1_200),
      },
    ];
    const report = assembleHistoryReport(
      input({
        tier: 'comprehensive',
        odometerDays: [day('2026-10-01', 1_000, 1_100), day('2026-10-02', 1_100, 1_200, { minKm: milesToKm(900) })],
        dayReadings,
      }),
    );
    expect(report.odometer_integrity.status).toBe('flagged');
    expect(report.odometer_integrity.flags.map((f) => [f.rule, f.readings.map((r) => r.miles)])).toEqual([
      ['backwards', [1_150, 900]],
    ]);
    expect(report.telematics!.odometer_timeline).toEqual([
      { at: '2026-10-01T18:00:00.000Z', miles: 1_100, source: 'samsara', flagged: false },
      { at: '2026-10-02T12:00:00.000Z', miles: 1_150, source: 'samsara', flagged: true },
      { at: '2026-10-02T13:00:00.000Z', miles: 900, source: 'samsara', flagged: true },
      { at: '2026-10-02T18:00:00.000Z', miles: 1_200, source: 'samsara', flagged: false },
    ]);
  });
});

describe('telematics', () => {
  it('gives monthly mileage as the month-end reading minus the previous month-end', () => {
    const report = assembleHistoryReport(
      input({
        tier: 'comprehensive',
        odometerDays: [
          day('2026-08-05', 1_000, 1_100),
          day('2026-08-30', 1_400, 1_500),
          day('2026-09-15', 1_800, 1_900),
          day('2026-11-02', 2_000, 2_050),
        ],
      }),
    );
    expect(report.telematics!.monthly_mileage).toEqual([
      { month: '2026-08', miles: 500 },
      { month: '2026-09', miles: 400 },
      { month: '2026-11', miles: 150 },
    ]);
  });
});

describe('ownership', () => {
  const spans = [
    {
      vehicleId: vehicleA,
      companyId: companyX,
      startedAt: new Date('2025-01-01T00:00:00Z'),
      endedAt: new Date('2026-07-01T12:00:00Z'),
    },
    { vehicleId: vehicleA, companyId: companyY, startedAt: new Date('2026-07-01T12:00:00Z'), endedAt: null },
  ];

  it('labels owners in order, never names them, and measures miles and trips per owner', () => {
    const report = assembleHistoryReport(
      input({
        tier: 'lifetime',
        ownerships: spans,
        odometerDays: [
          day('2025-01-01', 5_000, 5_000),
          day('2026-07-01', 9_000, 9_000),
          day('2026-11-24', 10_000, 10_000),
        ],
        drivingDays: [driving('2025-06-01', { trips: 546 }), driving('2026-08-01', { trips: 146 })],
      }),
    );
    expect(report.ownership).toEqual([
      { owner: 'Owner 1', start_date: '2025-01-01', end_date: '2026-07-01', miles_driven: 4_000, avg_trips_per_day: 1 },
      { owner: 'Owner 2', start_date: '2026-07-01', end_date: 'present', miles_driven: 1_000, avg_trips_per_day: 1 },
    ]);
    const json = JSON.stringify(report);
    expect(json).not.toContain(companyX);
    expect(json).not.toContain(companyY);
  });

  it('follows the VIN across vehicle rows; an older open row ends when the newer begins; a returning company keeps its label', () => {
    const report = assembleHistoryReport(
      input({
        tier: 'lifetime',
        ownerships: [
          {
            vehicleId: vehicleA,
            companyId: companyX,
            startedAt: new Date('2024-01-01Z'),
            endedAt: new Date('2025-01-01Z'),
          },
          { vehicleId: vehicleA, companyId: companyY, startedAt: new Date('2025-01-01Z'), endedAt: null },
          { vehicleId: vehicleB, companyId: companyX, startedAt: new Date('2026-01-01Z'), endedAt: null },
        ],
      }),
    );
    expect(report.ownership!.map((o) => [o.owner, o.start_date, o.end_date])).toEqual([
      ['Owner 1', '2024-01-01', '2025-01-01'],
      ['Owner 2', '2025-01-01', '2026-01-01'],
      ['Owner 1', '2026-01-01', 'present'],
    ]);
    expect(report.ownership!.every((o) => o.avg_trips_per_day === null)).toBe(true);
  });

  it('leaves out owners whose span ended before the range', () => {
    const report = assembleHistoryReport(
      input({
        tier: 'standard',
        ownerships: [
          {
            vehicleId: vehicleA,
            companyId: companyX,
            startedAt: new Date('2020-01-01Z'),
            endedAt: new Date('2024-01-01Z'),
          },
          { vehicleId: vehicleA, companyId: companyY, startedAt: new Date('2024-01-01Z'), endedAt: null },
        ],
      }),
    );
    expect(report.ownership!.map((o) => o.owner)).toEqual(['Owner 2']);
  });
});

describe('service history', () => {
  it('lists completed runs and service entries in date order, verified when telematics agrees', () => {
    const report = assembleHistoryReport(
      input({
        odometerDays: [day('2026-09-10', 20_000, 20_100)],
        runs: [
          {
            vehicleId: vehicleA,
            completedAt: new Date('2026-09-10T18:30:00Z'),
            title: 'Brakes',
            itemTypes: ['brake_inspection', 'oil_change'],
            completedOdometerKm: milesToKm(20_100),
            shop: 'Main Street Auto',
          },
        ],
        serviceEntries: [
          {
            vehicleId: vehicleA,
            type: 'tire_rotation',
            performedAt: new Date('2026-09-10T09:00:00Z'),
            odometerKm: milesToKm(25_000),
          },
          { vehicleId: vehicleA, type: 'wipers', performedAt: new Date('2026-10-10T09:00:00Z'), odometerKm: null },
        ],
      }),
    );
    expect(report.service_history).toEqual([
      { date: '2026-09-10', type: 'tire_rotation', mileage: 25_000, shop: null, verified: false },
      {
        date: '2026-09-10',
        type: 'brake_inspection, oil_change',
        mileage: 20_100,
        shop: 'Main Street Auto',
        verified: true,
      },
      { date: '2026-10-10', type: 'wipers', mileage: null, shop: null, verified: false },
    ]);
  });

  it('never verifies a mileage against a hand-typed reading', () => {
    const report = assembleHistoryReport(
      input({
        odometerDays: [day('2026-09-10', 20_000, 20_100, { source: 'manual' })],
        serviceEntries: [
          {
            vehicleId: vehicleA,
            type: 'oil_change',
            performedAt: new Date('2026-09-10T18:00:00Z'),
            odometerKm: milesToKm(20_100),
          },
        ],
      }),
    );
    expect(report.service_history[0]!.verified).toBe(false);
  });
});

describe('incidents', () => {
  const event = (
    at: string,
    kind: string,
    g: number | null,
    lat: number | null = 30.2672,
    lon: number | null = -97.7431,
  ) => ({
    vehicleId: vehicleA,
    kind,
    at: new Date(at),
    g,
    lat,
    lon,
  });

  it('groups an impact with its airbag, grades severity and locates to city level only', () => {
    const report = assembleHistoryReport(
      input({
        tier: 'standard',
        incidentEvents: [
          event('2026-10-01T10:00:00Z', 'impact', 1.8),
          event('2026-10-01T10:00:05Z', 'airbag_deployment', null),
          event('2026-10-05T10:00:00Z', 'impact', 1.6, null, null),
          event('2026-10-07T10:00:00Z', 'hard_brake', 0.6, -33.8688, 151.2093),
          event('2026-10-09T10:00:00Z', 'impact', 3.1),
          // The Gulf of Mexico, more than 50 km from any place: the rounded position in words.
          event('2026-10-11T10:00:00Z', 'impact', 1.7, 27.5213, -90.0458),
        ],
      }),
    );
    const austin = { location: 'Austin, Texas, US', coordinates: { lat: 30.3, lon: -97.7 } };
    expect(report.incidents).toEqual([
      { date: '2026-10-01', type: 'collision', severity: 'critical', ...austin, airbag_deployment: true },
      {
        date: '2026-10-05',
        type: 'collision',
        severity: 'high',
        location: null,
        coordinates: null,
        airbag_deployment: false,
      },
      {
        date: '2026-10-07',
        type: 'hard_deceleration',
        severity: 'medium',
        location: 'Sydney, New South Wales, AU',
        coordinates: { lat: -33.9, lon: 151.2 },
        airbag_deployment: false,
      },
      { date: '2026-10-09', type: 'collision', severity: 'critical', ...austin, airbag_deployment: false },
      {
        date: '2026-10-11',
        type: 'collision',
        severity: 'high',
        location: 'near 27.5° N, 90.0° W',
        coordinates: { lat: 27.5, lon: -90 },
        airbag_deployment: false,
      },
    ]);
    expect(JSON.stringify(report)).not.toContain('30.2672');
  });
});

describe('predictive insights', () => {
  it('forecasts the oil change, brakes and battery from the records and latest signals', () => {
    const report = assembleHistoryReport(
      input({
        tier: 'lifetime',
        vehicles: [
          {
            id: vehicleA,
            make: 'Honda',
            model: 'Accord',
            year: 2003,
            createdAt: new Date('2024-01-01Z'),
            signals: {
              battery_voltage: 12.65,
              brake_lining_percent: 40,
              observed_at: { battery_voltage: '2026-11-23T10:00:00Z', brake_lining_percent: '2026-11-20T10:00:00Z' },
            },
          },
        ],
        // 900 miles in 30.4 days: 4,100 miles left last about 139 days.
        odometerDays: [day('2026-10-25', 10_000, 10_000), day('2026-11-24', 10_900, 10_900)],
        serviceEntries: [
          {
            vehicleId: vehicleA,
            type: 'oil_change',
            performedAt: new Date('2026-10-25T09:00:00Z'),
            odometerKm: milesToKm(10_000),
          },
        ],
      }),
    );
    expect(report.predictive_insights).toEqual({
      next_oil_change:
        'Due around 2027-04-12 (4,100 miles left); last oil change 2026-10-25, every 5,000 miles or 6 months.',
      brake_replacement: 'Brake lining at 40 % on 2026-11-20; replace at 25 % or below.',
      battery_health: 'Good: 12.7 V on 2026-11-23.',
    });
  });

  it('says what is missing rather than guessing', () => {
    const report = assembleHistoryReport(input({ tier: 'lifetime' }));
    expect(report.predictive_insights).toEqual({
      next_oil_change: 'No oil change on record; the interval is every 5,000 miles or 6 months.',
      brake_replacement:
        "No brake service with a mileage on record; pads typically last 30,000–70,000 miles, about 50,000 at this vehicle's braking.",
      battery_health: 'No battery voltage reported.',
    });
  });
});

describe('vehicle predictions (premium monitoring events)', () => {
  const odometerDays = [day('2026-10-25', 10_000, 10_000), day('2026-11-24', 10_900, 10_900)];
  /** What db/history.ts listPredictionRecords sums up of these checkpoints: the series' first and last readings. */
  const ends = (days: readonly OdometerDay[]) => ({
    firstOdometer: { at: days[0]!.firstAt, km: days[0]!.firstKm },
    lastOdometer: { at: days[days.length - 1]!.lastAt, km: days[days.length - 1]!.lastKm },
  });
  const serviceEntries = [
    {
      vehicleId: vehicleA,
      type: 'oil_change',
      performedAt: new Date('2026-10-25T09:00:00Z'),
      odometerKm: milesToKm(10_000),
    },
    { vehicleId: vehicleA, type: 'brake_pads', performedAt: new Date('2026-10-25T09:00:00Z'), odometerKm: null },
  ];
  const record = { ...ends(odometerDays), ownerStartKm: null, ownerHardBrakes: 0, runs: [], serviceEntries, now };
  const signals = { battery_voltage: 12.65, observed_at: { battery_voltage: '2026-11-23T10:00:00Z' } };

  it("are the lifetime report's texts for the vehicle, null where its records say nothing", () => {
    const report = assembleHistoryReport(
      input({
        tier: 'lifetime',
        vehicles: [{ id: vehicleA, make: null, model: null, year: null, createdAt: new Date('2024-01-01Z'), signals }],
        odometerDays,
        serviceEntries,
      }),
    );
    const predictions = vehiclePredictions({ ...record, signals });
    expect(predictions).toEqual({
      next_oil_change: report.predictive_insights!.next_oil_change,
      // No lining reading and no brake service with a mileage: the report's typical figures only.
      brake_replacement: null,
      battery_health: report.predictive_insights!.battery_health,
    });
    expect(predictions.battery_health).toBe('Good: 12.7 V on 2026-11-23.');
    expect(vehiclePredictions({ ...record, signals: {}, serviceEntries: [] })).toEqual({
      next_oil_change: null,
      brake_replacement: null,
      battery_health: null,
    });
    // Oil life alone is a reading of the vehicle.
    expect(
      vehiclePredictions({ ...record, signals: { oil_life_percent: 40 }, serviceEntries: [] }).next_oil_change,
    ).toBe('Oil life 40 %. No oil change on record; the interval is every 5,000 miles or 6 months.');
  });

  it("rate the current owner's harsh braking over the miles of the current owner's days, not the car's lifetime", () => {
    // The first owner drove 9,000 miles braking hard 30 times; the vehicle changed hands on 2026-11-01
    // and the new owner braked hard twice in 500 miles.
    const days = [
      day('2026-10-01', 10_000, 10_000),
      day('2026-10-20', 19_000, 19_000),
      day('2026-11-24', 19_500, 19_500),
    ];
    const brakeService = {
      vehicleId: vehicleA,
      type: 'brake_pads',
      performedAt: new Date('2026-10-01T09:00:00Z'),
      odometerKm: milesToKm(10_000),
    };
    const brakes = (ownerStartKm: number | null, ownerHardBrakes: number) =>
      vehiclePredictions({
        ...record,
        ...ends(days),
        signals: {},
        ownerStartKm,
        ownerHardBrakes,
        serviceEntries: [brakeService],
      }).brake_replacement;
    // 2 per 500 miles (0.4 per 100): 50,000 / 1.4. Over the lifetime's 9,500 miles it would read 48,969.
    expect(brakes(milesToKm(19_000), 2)).toBe(
      "About 26,214 miles left (estimate: pads last about 35,714 miles at this vehicle's braking; last brake service 2026-10-01).",
    );
    // Never transferred: every owner's 32 over the 9,500 miles, as the lifetime report rates them (a report spans owners).
    const drivingDays = [driving('2026-10-10', { hardBrakes: 30 }), driving('2026-11-10', { hardBrakes: 2 })];
    const report = assembleHistoryReport(
      input({ tier: 'lifetime', drivingDays, odometerDays: days, serviceEntries: [brakeService] }),
    );
    expect(brakes(null, 32)).toBe(report.predictive_insights!.brake_replacement);
    expect(brakes(null, 32)).toContain('pads last about 37,402 miles');
    // 300 harsh brakes in 500 miles shorten the pads' life to the 30,000-mile floor; none leave the typical 50,000.
    expect(brakes(milesToKm(19_000), 300)).toContain('pads last about 30,000 miles');
    expect(brakes(milesToKm(19_000), 0)).toContain('pads last about 50,000 miles');
  });
});
