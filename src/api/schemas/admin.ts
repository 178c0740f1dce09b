/** Schemas of the operator API (DESIGN §5). */
import Type, { type Static } from 'typebox';
import { providerIds } from '../../../providers/types.js';
import { Nullable, NullableString, StringEnum, Timestamp } from './common.js';
import { Run } from './run.js';
import { Vehicle } from './vehicle.js';

export const Company = Type.Object({
  id: Type.String(),
  name: Type.String(),
  external_ids: Type.Record(Type.String(), Type.String()),
  created_at: Timestamp,
});

export const CompanyCreate = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    external_ids: Type.Optional(Type.Record(Type.String({ maxLength: 100 }), Type.String({ maxLength: 200 }))),
  },
  { additionalProperties: false },
);

export const ApiKey = Type.Object({
  id: Type.String(),
  company_id: Type.String(),
  name: NullableString,
  prefix: Type.String({ description: 'First characters of the key, to recognise it.' }),
  created_at: Timestamp,
  last_used_at: Nullable(Timestamp),
  revoked_at: Nullable(Timestamp),
});

export const CreatedApiKey = Type.Object({
  ...ApiKey.properties,
  key: Type.String({ description: 'The API key. Shown once: only its hash is stored.' }),
});

export const ApiKeyCreate = Type.Object(
  { name: Type.Optional(Nullable(Type.String({ maxLength: 200 }))) },
  { additionalProperties: false },
);

export const LocationInput = Type.Object(
  {
    name: Type.Optional(NullableString),
    street_1: Type.Optional(NullableString),
    street_2: Type.Optional(NullableString),
    city: Type.Optional(NullableString),
    state: Type.Optional(NullableString),
    postal_code: Type.Optional(NullableString),
    country: Type.Optional(Nullable(Type.String({ pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2' }))),
    display_address: Type.Optional(NullableString),
    latitude: Type.Optional(Nullable(Type.Number({ minimum: -90, maximum: 90 }))),
    longitude: Type.Optional(Nullable(Type.Number({ minimum: -180, maximum: 180 }))),
  },
  { additionalProperties: false },
);
export type LocationInput = Static<typeof LocationInput>;

const vehicleFields = {
  name: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
  vin: Type.Optional(Nullable(Type.String({ pattern: '^[A-HJ-NPR-Za-hj-npr-z0-9]{17}$', description: '17 characters, no I, O or Q.' }))),
  license_plate: Type.Optional(Nullable(Type.String({ maxLength: 32 }))),
  make: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
  model: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
  year: Type.Optional(Nullable(Type.Integer({ minimum: 1900, maximum: 2100 }))),
  telematics_provider: Type.Optional(
    Nullable(StringEnum(providerIds, { description: 'null for a manually tracked vehicle.' })),
  ),
  provider_vehicle_id: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 200 }))),
  provider_connection_id: Type.Optional(Nullable(Type.String({ format: 'uuid', description: 'The connection whose data this vehicle receives.' }))),
  home_location: Type.Optional(Nullable(LocationInput)),
};

export const VehicleCreate = Type.Object(vehicleFields, { additionalProperties: false });
export type VehicleCreate = Static<typeof VehicleCreate>;
export const VehiclePatch = Type.Object(vehicleFields, { additionalProperties: false, minProperties: 1 });

export const AdminVehicle = Type.Object({
  ...Vehicle.properties,
  company_id: Type.String(),
  active: Type.Boolean(),
  provider_vehicle_id: NullableString,
  provider_connection_id: NullableString,
  home_location_id: NullableString,
});

const ServiceItem = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: 200 }),
    description: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
    type: Type.String({ minLength: 1, maxLength: 50, description: 'Line-item type, e.g. service or inspection.' }),
  },
  { additionalProperties: false },
);

const AddressInput = Type.Object(
  {
    street: Type.Optional(NullableString),
    city: Type.Optional(NullableString),
    state: Type.Optional(NullableString),
    postal_code: Type.Optional(NullableString),
  },
  { additionalProperties: false },
);

export const ServiceRequestCreate = Type.Object(
  {
    vehicle_id: Type.String({ format: 'uuid' }),
    title: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
    description: Type.Optional(Nullable(Type.String({ maxLength: 4000 }))),
    items: Type.Array(ServiceItem, { maxItems: 100, default: [] }),
    customer: Type.Optional(
      Nullable(
        Type.Object(
          {
            name: Type.Optional(NullableString),
            email: Type.Optional(Nullable(Type.String({ format: 'email' }))),
            phone: Type.Optional(NullableString),
            address: Type.Optional(Nullable(AddressInput)),
            display_address: Type.Optional(NullableString),
          },
          { additionalProperties: false },
        ),
      ),
    ),
    preferred_start: Type.Optional(Nullable(Timestamp)),
    preferred_end: Type.Optional(Nullable(Timestamp)),
    location: Type.Optional(Nullable(LocationInput)),
  },
  { additionalProperties: false },
);
export type ServiceRequestCreate = Static<typeof ServiceRequestCreate>;

export const ServiceRequestResult = Type.Object({ run: Run, folded: Type.Boolean() });

export const AppointmentWindow = Type.Object({ start: Timestamp, end: Timestamp }, { additionalProperties: false });
export const OptionalAppointmentWindow = Type.Object(
  { start: Type.Optional(Timestamp), end: Type.Optional(Timestamp) },
  { additionalProperties: false },
);

export const DispatchProposalBody = Type.Object(
  {
    assignee: Type.Object(
      {
        type: StringEnum(['shop', 'technician']),
        id: Type.String({ minLength: 1, maxLength: 200 }),
        name: Type.String({ minLength: 1, maxLength: 200 }),
      },
      { additionalProperties: false },
    ),
    reason: Type.String({ minLength: 1, maxLength: 1000 }),
  },
  { additionalProperties: false },
);
