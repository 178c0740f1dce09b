/** Instant verification (docs/verification.md). */
import Type from 'typebox';
import { addressSources, verificationLevels } from '../../verification/verify.js';
import { confidences } from '../../verification/confidence.js';
import { Nullable, NullableString, NullableTimestamp, StringEnum, Text, Timestamp } from '../../web/schemas.js';
import { VehicleAlert } from './vehicle.js';

export const VerificationRequest = Type.Object(
  {
    vin: Text('code', { minLength: 1, description: 'VIN of one of your active vehicles.' }),
    level: Type.Optional(StringEnum(verificationLevels, { description: 'Default basic.' })),
  },
  { additionalProperties: false },
);

const NullableNumber = Nullable(Type.Number());

export const Verification = Type.Object({
  vin: Type.String(),
  verification_id: Type.String(),
  level: StringEnum(verificationLevels),
  timestamp: Timestamp,
  odometer: Type.Object({
    value: NullableNumber,
    unit: Type.Literal('miles'),
    confidence: StringEnum(confidences, { description: 'From the link state and the age: docs/verification.md.' }),
    verified: Type.Boolean(),
    timestamp: NullableTimestamp,
    source: NullableString,
  }),
  location: Nullable(
    Type.Object({
      latitude: Type.Number(),
      longitude: Type.Number(),
      address: Nullable(
        Type.String({
          description:
            'The provider\'s reverse geocoding; without one, the nearest place within 50 km as "City, Region, CC" ' +
            '(docs/places.md); else null.',
        }),
      ),
      address_source: Nullable(
        StringEnum(addressSources, {
          description: 'provider or nearest_place; null when address is null. Additive to the spec.',
        }),
      ),
      timestamp: NullableTimestamp,
    }),
  ),
  condition: Type.Optional(
    Type.Object(
      {
        battery_voltage: NullableNumber,
        battery_health: StringEnum(['good', 'weak', 'low', 'unknown']),
        fuel_level: NullableNumber,
        check_engine: Nullable(Type.Boolean()),
        check_engine_light: Nullable(
          Type.Boolean({ description: "The spec's descriptive variant of check_engine: the same value." }),
        ),
        tire_pressure: StringEnum(['ok', 'low', 'unknown']),
        last_maintenance: NullableString,
      },
      { description: 'standard and premium.' },
    ),
  ),
  diagnostics: Type.Optional(
    Type.Object(
      {
        health_status: Type.String(),
        dtcs: Type.Array(Type.Object({ code: Type.String(), system: Type.String(), mil: Type.Boolean() })),
        tire_pressure_kpa: Nullable(
          Type.Object({
            front_left: NullableNumber,
            front_right: NullableNumber,
            rear_left: NullableNumber,
            rear_right: NullableNumber,
          }),
        ),
        engine_hours: NullableNumber,
        oil_life_percent: NullableNumber,
        coolant_temp_c: NullableNumber,
        brake_lining_percent: NullableNumber,
        open_alerts: Type.Array(VehicleAlert),
      },
      { description: 'premium only.' },
    ),
  ),
});
