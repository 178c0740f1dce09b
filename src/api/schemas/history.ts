/**
 * The history report (docs/history-report.md) as
 * src/history/types.ts declares it; sections a tier does not include are null.
 */
import Type from 'typebox';
import { reportTiers } from '../../history/types.js';
import { Nullable, NullableString, StringEnum, Text, Timestamp } from '../../web/schemas.js';

export const reportFormats = ['json', 'pdf'] as const;

export const HistoryReportRequest = Type.Object(
  {
    vin: Text('code', { minLength: 1, description: 'Vehicle identification number (17 characters).' }),
    tier: Type.Optional(StringEnum(reportTiers, { description: 'Default basic.' })),
    format: Type.Optional(
      StringEnum(reportFormats, { description: 'pdf answers application/pdf; so does Accept: application/pdf.' }),
    ),
  },
  { additionalProperties: false },
);

const NullableNumber = Nullable(Type.Number());

const OdometerReading = Type.Object({ at: Timestamp, miles: Type.Number(), source: Type.String() });

export const HistoryReport = Type.Object({
  report_id: Type.String(),
  vin: Type.String(),
  tier: StringEnum(reportTiers),
  generated_at: Timestamp,
  data_range: Type.Object({ from: Nullable(Timestamp), to: Timestamp }),
  vehicle: Type.Object({
    make: NullableString,
    model: NullableString,
    year: Nullable(Type.Integer()),
    trim: NullableString,
  }),
  lifetime_metrics: Type.Object({
    total_miles: NullableNumber,
    first_recorded: NullableString,
    avg_miles_per_year: NullableNumber,
    driving_score: NullableNumber,
    harsh_braking_events: Type.Integer(),
    rapid_acceleration_events: Type.Integer(),
    avg_speed: NullableNumber,
    highway_percentage: NullableNumber,
  }),
  service_history: Type.Array(
    Type.Object({
      date: Type.String(),
      type: Type.String(),
      mileage: NullableNumber,
      shop: NullableString,
      verified: Type.Boolean(),
    }),
  ),
  incidents: Nullable(
    Type.Array(
      Type.Object({
        date: Type.String(),
        type: Type.String(),
        severity: Type.String(),
        location: Nullable(
          Type.String({
            description:
              'City level: "City, Region, CC" (or "City, CC") of the nearest place within 50 km, ' +
              'else "near 30.3° N, 97.7° W"; null without a position. docs/places.md.',
          }),
        ),
        coordinates: Nullable(
          Type.Object(
            { lat: Type.Number(), lon: Type.Number() },
            { description: 'The position rounded to 0.1° (about 11 km). Additive to the spec.' },
          ),
        ),
        airbag_deployment: Type.Boolean(),
      }),
    ),
  ),
  ownership: Nullable(
    Type.Array(
      Type.Object({
        owner: Type.String(),
        start_date: Type.String(),
        end_date: Type.String({ description: 'A date, or "present" for the current owner.' }),
        miles_driven: NullableNumber,
        avg_trips_per_day: NullableNumber,
      }),
    ),
  ),
  telematics: Nullable(
    Type.Object({
      monthly_mileage: Type.Array(Type.Object({ month: Type.String(), miles: Type.Number() })),
      odometer_timeline: Type.Array(
        Type.Object({ at: Timestamp, miles: Type.Number(), source: Type.String(), flagged: Type.Boolean() }),
      ),
    }),
  ),
  predictive_insights: Nullable(
    Type.Object({
      next_oil_change: Type.String(),
      brake_replacement: Type.String(),
      battery_health: Type.String(),
    }),
  ),
  odometer_integrity: Type.Object({
    status: StringEnum(['consistent', 'flagged', 'insufficient_data']),
    flags: Type.Array(
      Type.Object({
        rule: StringEnum(['backwards', 'impossible_rate', 'source_conflict']),
        explanation: Type.String(),
        readings: Type.Array(OdometerReading),
      }),
    ),
  }),
});
