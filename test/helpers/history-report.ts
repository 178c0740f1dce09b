/**
 * Sample history reports, one per tier, built without a database: for the PDF tests and for any
 * test that needs a well-formed report (the billing helper's routes). Deterministic: fixed dates,
 * no random values, so two calls give equal reports.
 *
 * Variants:
 * - typical: a few records in every included section, odometer consistent.
 * - many_rows: long service history and many months, to force page breaks inside tables.
 * - flagged: odometer integrity flagged by each rule, and an airbag incident.
 * - empty: every included section holds no records; integrity has insufficient data.
 */
import type { HistoryReport, OdometerReading, ReportTier } from '../../src/history/types.js';

export type SampleVariant = 'typical' | 'many_rows' | 'flagged' | 'empty';

export const sampleVin = '1HGCM82633A004352';
export const sampleGeneratedAt = '2026-11-20T15:30:00.000Z';

const rangeStart: Record<ReportTier, string | null> = {
  basic: '2026-05-20T15:30:00.000Z',
  standard: '2025-11-20T15:30:00.000Z',
  comprehensive: '2023-11-20T15:30:00.000Z',
  lifetime: null,
};

const tierRank: Record<ReportTier, number> = { basic: 0, standard: 1, comprehensive: 2, lifetime: 3 };

function monthsBack(count: number): string[] {
  const months: string[] = [];
  for (let index = count - 1; index >= 0; index -= 1) {
    const date = new Date(Date.UTC(2026, 10 - index, 1));
    months.push(`${date.getUTCFullYear()}-${String(date.getUTCMonth() + 1).padStart(2, '0')}`);
  }
  return months;
}

/** Deterministic "random-looking" mileage: 900–1,700 miles a month. */
function milesOfMonth(index: number): number {
  return 900 + ((index * 337) % 800);
}

const flags: HistoryReport['odometer_integrity']['flags'] = [
  {
    rule: 'backwards',
    explanation:
      'The odometer read 48,210 mi on Jun 2, 2026 and then 47,020 mi on Jun 9, 2026: 1,190 mi lower, beyond the 250 mi tolerance.',
    readings: [
      { at: '2026-06-02T08:00:00.000Z', miles: 48210, source: 'samsara' },
      { at: '2026-06-09T08:00:00.000Z', miles: 47020, source: 'manual' },
    ],
  },
  {
    rule: 'impossible_rate',
    explanation:
      'The odometer rose 3,400 mi in 20 hours (4,080 mi/day), more than the 1,000 mi/day a vehicle can cover.',
    readings: [
      { at: '2026-08-01T00:00:00.000Z', miles: 51000, source: 'samsara' },
      { at: '2026-08-01T20:00:00.000Z', miles: 54400, source: 'samsara' },
    ],
  },
  {
    rule: 'source_conflict',
    explanation:
      'Two sources disagreed by 2,100 mi within one hour: samsara read 55,100 mi and service read 57,200 mi.',
    readings: [
      { at: '2026-09-15T10:00:00.000Z', miles: 55100, source: 'samsara' },
      { at: '2026-09-15T10:40:00.000Z', miles: 57200, source: 'service' },
    ],
  },
];

const serviceTypes = ['Oil change', 'Tire rotation', 'Brake pads replaced', 'Battery replaced', 'Annual inspection'];
const shops = ['Main Street Auto Care', null, 'Northside Fleet Service'];

function serviceHistory(count: number): HistoryReport['service_history'] {
  return Array.from({ length: count }, (_, index) => {
    const day = new Date(Date.UTC(2026, 10, 15) - index * 9 * 86_400_000);
    return {
      date: day.toISOString().slice(0, 10),
      type: serviceTypes[index % serviceTypes.length]!,
      mileage: 60_000 - index * 410,
      shop: shops[index % shops.length]!,
      verified: index % 4 !== 3,
    };
  });
}

function odometerTimeline(months: string[], flagged: boolean) {
  let miles = 2_000;
  const timeline: Array<OdometerReading & { flagged: boolean }> = months.map((month, index) => {
    miles += milesOfMonth(index);
    return { at: `${month}-28T12:00:00.000Z`, miles, source: index % 5 === 4 ? 'service' : 'samsara', flagged: false };
  });
  if (!flagged) return timeline;
  const flaggedReadings = flags.flatMap((flag) => flag.readings.map((reading) => ({ ...reading, flagged: true })));
  return [...timeline, ...flaggedReadings].sort((a, b) => a.at.localeCompare(b.at));
}

export function sampleHistoryReport(tier: ReportTier, variant: SampleVariant = 'typical'): HistoryReport {
  const empty = variant === 'empty';
  const monthCount = { basic: 6, standard: 12, comprehensive: 36, lifetime: variant === 'many_rows' ? 60 : 48 }[tier];
  const months = monthsBack(monthCount);
  const includes = (from: ReportTier) => tierRank[tier] >= tierRank[from];
  return {
    report_id: `hr_sample_${tier}_${variant}`,
    vin: sampleVin,
    tier,
    generated_at: sampleGeneratedAt,
    data_range: { from: rangeStart[tier], to: sampleGeneratedAt },
    vehicle: { make: 'Honda', model: 'Accord', year: 2003, trim: empty ? null : 'EX' },
    lifetime_metrics: empty
      ? {
          total_miles: null,
          first_recorded: null,
          avg_miles_per_year: null,
          driving_score: null,
          harsh_braking_events: 0,
          rapid_acceleration_events: 0,
          avg_speed: null,
          highway_percentage: null,
        }
      : {
          total_miles: 60_000,
          first_recorded: '2022-11-03',
          avg_miles_per_year: 14_850,
          driving_score: 82,
          harsh_braking_events: 14,
          rapid_acceleration_events: 9,
          avg_speed: 31.4,
          highway_percentage: 37.5,
        },
    service_history: empty ? [] : serviceHistory(variant === 'many_rows' ? 90 : 4),
    incidents: !includes('standard')
      ? null
      : empty
        ? []
        : [
            {
              date: '2026-03-11',
              type: 'hard_deceleration',
              severity: 'low',
              location: 'Austin, Texas, US',
              coordinates: { lat: 30.3, lon: -97.7 },
              airbag_deployment: false,
            },
            ...(variant === 'flagged'
              ? [
                  {
                    date: '2026-07-04',
                    type: 'impact',
                    severity: 'high',
                    location: 'Round Rock, Texas, US',
                    coordinates: { lat: 30.5, lon: -97.7 },
                    airbag_deployment: true,
                  },
                ]
              : []),
          ],
    ownership: !includes('standard')
      ? null
      : empty
        ? []
        : [
            {
              owner: 'Owner 1',
              start_date: '2022-11-03',
              end_date: '2025-02-14',
              miles_driven: 31_200,
              avg_trips_per_day: 3.2,
            },
            {
              owner: 'Owner 2',
              start_date: '2025-02-14',
              end_date: 'present',
              miles_driven: 28_800,
              avg_trips_per_day: 4.7,
            },
          ],
    telematics: !includes('comprehensive')
      ? null
      : empty
        ? { monthly_mileage: [], odometer_timeline: [] }
        : {
            monthly_mileage: months.map((month, index) => ({ month, miles: milesOfMonth(index) })),
            odometer_timeline: odometerTimeline(months, variant === 'flagged'),
          },
    predictive_insights: !includes('lifetime')
      ? null
      : {
          next_oil_change: 'In about 1,800 mi (around Jan 2027)',
          brake_replacement: 'Front pads in about 9,000 mi',
          battery_health: 'Good: 12.6 V at rest, 3 years old',
        },
    odometer_integrity: empty
      ? { status: 'insufficient_data', flags: [] }
      : variant === 'flagged'
        ? { status: 'flagged', flags }
        : { status: 'consistent', flags: [] },
  };
}
