/** Operator writes to vehicles: create, patch, deactivate. */
import type { LinkBroken, VehicleRecord } from '../domain/vehicle.js';
import { invalidRequest, notFound } from '../errors.js';
import { findProviderConnection } from '../db/provider-connections.js';
import { insertServiceLocation, type ServiceLocationInput } from '../db/service-locations.js';
import { insertVehicle, lockVehicle, updateVehicleAttributes, type VehicleAttributePatch } from '../db/vehicles.js';
import type { PoolClient } from '../db/pool.js';

export interface VehicleAttributes {
  name?: string | null;
  vin?: string | null;
  licensePlate?: string | null;
  make?: string | null;
  model?: string | null;
  year?: number | null;
  telematicsProvider?: string | null;
  providerVehicleId?: string | null;
  providerConnectionId?: string | null;
  homeLocation?: ServiceLocationInput | null;
}

/**
 * The link state of a vehicle that has no odometer from its provider yet: `no_reading` when it has
 * a provider, null when it is tracked by hand (docs/api.md "Resources").
 */
export function linkBrokenWithoutReadings(telematicsProvider: string | null): LinkBroken | null {
  return telematicsProvider ? { reason: 'no_reading', since: null, tracker_km: null } : null;
}

/** A provider vehicle id is mapped to one vehicle per connection; a second mapping is a client error. */
async function mappingUnique<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    const pgError = error as { code?: string; constraint?: string };
    if (pgError.code === '23505' && pgError.constraint === 'vehicles_connection_provider_vehicle') {
      throw invalidRequest([
        { field: 'provider_vehicle_id', message: 'is already mapped to another vehicle of this connection' },
      ]);
    }
    throw error;
  }
}

async function homeLocationId(tx: PoolClient, companyId: string, location: ServiceLocationInput | null | undefined) {
  if (location === undefined) return undefined;
  return location === null ? null : (await insertServiceLocation(tx, companyId, location)).id;
}

/**
 * The provider a vehicle reports through: a connection must belong to the company, and fixes the
 * provider (telematics_provider may be left out, or must match it).
 */
async function providerOf(
  tx: PoolClient,
  companyId: string,
  connectionId: string | null | undefined,
  provider: string | null | undefined,
): Promise<string | null | undefined> {
  if (!connectionId) return provider;
  const connection = await findProviderConnection(tx, connectionId);
  if (!connection || connection.companyId !== companyId) {
    throw invalidRequest([
      { field: 'provider_connection_id', message: 'is not a provider connection of this company' },
    ]);
  }
  if (provider !== undefined && provider !== connection.provider) {
    throw invalidRequest([
      { field: 'telematics_provider', message: `must be ${connection.provider}, the provider of the connection` },
    ]);
  }
  return connection.provider;
}

export async function createVehicle(tx: PoolClient, companyId: string, v: VehicleAttributes): Promise<VehicleRecord> {
  const telematicsProvider = (await providerOf(tx, companyId, v.providerConnectionId, v.telematicsProvider)) ?? null;
  const homeLocation = (await homeLocationId(tx, companyId, v.homeLocation)) ?? null;
  return mappingUnique(() =>
    insertVehicle(tx, companyId, {
      name: v.name ?? null,
      vin: v.vin?.toUpperCase() ?? null,
      licensePlate: v.licensePlate ?? null,
      make: v.make ?? null,
      model: v.model ?? null,
      year: v.year ?? null,
      telematicsProvider,
      providerVehicleId: v.providerVehicleId ?? null,
      providerConnectionId: v.providerConnectionId ?? null,
      homeLocationId: homeLocation,
      linkBroken: linkBrokenWithoutReadings(telematicsProvider),
    }),
  );
}

export async function patchVehicle(
  tx: PoolClient,
  companyId: string,
  vehicleId: string,
  v: VehicleAttributes,
): Promise<VehicleRecord> {
  const current = await lockVehicle(tx, companyId, vehicleId);
  if (!current) throw notFound('vehicle');
  const patch: VehicleAttributePatch = {};
  if (v.name !== undefined) patch.name = v.name;
  if (v.vin !== undefined) patch.vin = v.vin?.toUpperCase() ?? null;
  if (v.licensePlate !== undefined) patch.licensePlate = v.licensePlate;
  if (v.make !== undefined) patch.make = v.make;
  if (v.model !== undefined) patch.model = v.model;
  if (v.year !== undefined) patch.year = v.year;
  if (v.providerVehicleId !== undefined) patch.providerVehicleId = v.providerVehicleId;
  if (v.providerConnectionId !== undefined) patch.providerConnectionId = v.providerConnectionId;
  const provider = await providerOf(tx, companyId, v.providerConnectionId, v.telematicsProvider);
  if (provider !== undefined && provider !== current.telematicsProvider) {
    patch.telematicsProvider = provider;
    // A new source starts with no odometer from it; the health stage takes over from its first reading.
    patch.linkBroken = linkBrokenWithoutReadings(provider);
  }
  const location = await homeLocationId(tx, companyId, v.homeLocation);
  if (location !== undefined) patch.homeLocationId = location;
  const updated = await mappingUnique(() => updateVehicleAttributes(tx, companyId, vehicleId, patch));
  if (!updated) throw notFound('vehicle');
  return updated;
}
