/** Operator request bodies (snake_case) mapped onto domain inputs. */
import type { ServiceLocationInput } from '../../../db/service-locations.js';
import type { VehicleAttributes } from '../../../vehicles/vehicle-admin.js';
import type { LocationInput, VehicleCreate } from '../../schemas/admin.js';

export function locationInput(l: LocationInput): ServiceLocationInput {
  return {
    name: l.name ?? null,
    street1: l.street_1 ?? null,
    street2: l.street_2 ?? null,
    city: l.city ?? null,
    state: l.state ?? null,
    postalCode: l.postal_code ?? null,
    country: l.country ?? null,
    displayAddress: l.display_address ?? null,
    latitude: l.latitude ?? null,
    longitude: l.longitude ?? null,
  };
}

/** Only the fields present in the body: absent stays as it is, null clears. */
export function vehicleAttributes(body: VehicleCreate): VehicleAttributes {
  const v: VehicleAttributes = {};
  if (body.name !== undefined) v.name = body.name;
  if (body.vin !== undefined) v.vin = body.vin;
  if (body.license_plate !== undefined) v.licensePlate = body.license_plate;
  if (body.make !== undefined) v.make = body.make;
  if (body.model !== undefined) v.model = body.model;
  if (body.year !== undefined) v.year = body.year;
  if (body.telematics_provider !== undefined) v.telematicsProvider = body.telematics_provider;
  if (body.provider_vehicle_id !== undefined) v.providerVehicleId = body.provider_vehicle_id;
  if (body.provider_connection_id !== undefined) v.providerConnectionId = body.provider_connection_id;
  if (body.home_location !== undefined)
    v.homeLocation = body.home_location === null ? null : locationInput(body.home_location);
  return v;
}
