/** Schemas of the operator API (docs/operator-api.md). */
import Type, { type Static } from 'typebox';
import { providerIds } from '../../../providers/types.js';
import {
  Nullable,
  NullableString,
  OptionalText,
  StringEnum,
  Text,
  Timestamp,
  Uuid,
  maxItems,
  maxLength,
} from '../../web/schemas.js';
import { Run } from './run.js';
import { Vehicle } from './vehicle.js';

export const Company = Type.Object({
  id: Type.String(),
  name: Type.String(),
  external_ids: Type.Record(Type.String(), Type.String()),
  created_at: Timestamp,
});

/** Ids of the company in other systems, by system name. */
export const ExternalIds = Type.Record(Type.String(), Text('name'), {
  maxProperties: maxItems,
  propertyNames: { maxLength: maxLength.id },
});

export const CompanyCreate = Type.Object(
  { name: Text('name', { minLength: 1 }), external_ids: Type.Optional(ExternalIds) },
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

export const ApiKeyCreate = Type.Object({ name: OptionalText('name') }, { additionalProperties: false });

export const LocationInput = Type.Object(
  {
    name: OptionalText('name'),
    street_1: OptionalText('name'),
    street_2: OptionalText('name'),
    city: OptionalText('name'),
    state: OptionalText('name'),
    postal_code: OptionalText('code'),
    country: Type.Optional(
      Nullable(Type.String({ pattern: '^[A-Z]{2}$', maxLength: 2, description: 'ISO 3166-1 alpha-2' })),
    ),
    display_address: OptionalText('text'),
    latitude: Type.Optional(Nullable(Type.Number({ minimum: -90, maximum: 90 }))),
    longitude: Type.Optional(Nullable(Type.Number({ minimum: -180, maximum: 180 }))),
  },
  { additionalProperties: false },
);
export type LocationInput = Static<typeof LocationInput>;

const vehicleFields = {
  name: OptionalText('name'),
  vin: Type.Optional(
    Nullable(
      Type.String({
        pattern: '^[A-HJ-NPR-Za-hj-npr-z0-9]{17}$',
        maxLength: 17,
        description: '17 characters, no I, O or Q.',
      }),
    ),
  ),
  license_plate: OptionalText('licensePlate'),
  make: OptionalText('name'),
  model: OptionalText('name'),
  year: Type.Optional(Nullable(Type.Integer({ minimum: 1900, maximum: 2100 }))),
  telematics_provider: Type.Optional(
    Nullable(StringEnum(providerIds, { description: 'null for a manually tracked vehicle.' })),
  ),
  provider_vehicle_id: Type.Optional(Nullable(Text('id', { minLength: 1 }))),
  provider_connection_id: Type.Optional(
    Nullable(
      Type.String({
        format: 'uuid',
        maxLength: maxLength.uuid,
        description: 'The connection whose data this vehicle receives.',
      }),
    ),
  ),
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
    title: Text('name', { minLength: 1 }),
    description: OptionalText('text'),
    type: Text('code', { minLength: 1, description: 'Line-item type, e.g. service or inspection.' }),
  },
  { additionalProperties: false },
);

const AddressInput = Type.Object(
  {
    street: OptionalText('name'),
    city: OptionalText('name'),
    state: OptionalText('name'),
    postal_code: OptionalText('code'),
  },
  { additionalProperties: false },
);

export const ServiceRequestCreate = Type.Object(
  {
    vehicle_id: Uuid,
    title: OptionalText('name'),
    description: OptionalText('text'),
    items: Type.Array(ServiceItem, { maxItems, default: [] }),
    customer: Type.Optional(
      Nullable(
        Type.Object(
          {
            name: OptionalText('name'),
            email: Type.Optional(Nullable(Type.String({ format: 'email', maxLength: maxLength.email }))),
            phone: OptionalText('phone'),
            address: Type.Optional(Nullable(AddressInput)),
            display_address: OptionalText('text'),
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
        id: Text('id', { minLength: 1 }),
        name: Text('name', { minLength: 1 }),
      },
      { additionalProperties: false },
    ),
    reason: Text('text', { minLength: 1 }),
  },
  { additionalProperties: false },
);
