import Type, { type Static } from 'typebox';
import { Nullable, NullableString, NullableTimestamp, OptionalText, StringEnum, Timestamp } from '../../web/schemas.js';

export const VehicleAlert = Type.Object({
  severity: StringEnum(['info', 'low', 'medium', 'high', 'critical']),
  type: NullableString,
  display_name: NullableString,
  due_date: NullableString,
  due_miles_remaining: Nullable(Type.Integer()),
});

export const VehicleHealth = Type.Object({
  status: StringEnum(['ok', 'needs_attention', 'critical', 'unknown']),
  alerts: Type.Array(VehicleAlert),
});

export const LinkBroken = Type.Object({
  reason: StringEnum(['conflict', 'no_reading', 'stale']),
  since: NullableTimestamp,
  tracker_km: Nullable(Type.Number()),
});

export const Vehicle = Type.Object({
  id: Type.String(),
  name: NullableString,
  license_plate: NullableString,
  vin: NullableString,
  make: NullableString,
  model: NullableString,
  year: Nullable(Type.Integer()),
  telematics_provider: NullableString,
  as_of: NullableTimestamp,
  updated_at: Timestamp,
  health: VehicleHealth,
  signals: Type.Object(
    {},
    {
      additionalProperties: true,
      description: 'Provider-normalized signals; odometer is {km, miles, as_of, source}. See docs/signals.md.',
    },
  ),
  link_broken: Nullable(LinkBroken),
});
export type Vehicle = Static<typeof Vehicle>;

export const VehicleUpdateRequest = Type.Object(
  {
    license_plate: OptionalText('licensePlate'),
    name: OptionalText('name'),
    odometer_miles: Type.Optional(
      Nullable(
        Type.Number({
          minimum: 0,
          maximum: 10_000_000,
          description: 'Odometer in miles, recorded as a reading taken now.',
        }),
      ),
    ),
  },
  { additionalProperties: false },
);
export type VehicleUpdateRequest = Static<typeof VehicleUpdateRequest>;
