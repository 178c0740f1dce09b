/**
 * A vehicle as the public API and the console show it (response schema: src/api/schemas/vehicle.ts
 * `Vehicle`); the operator API adds the fields only an operator sees.
 */
import type { OdometerSignal, VehicleRecord } from '../domain/vehicle.js';
import { kmToMiles, round2 } from '../domain/units.js';

/** Stored signals with the odometer given in both units, as the spec shows it. */
function presentSignals(signals: Record<string, unknown>): Record<string, unknown> {
  const odometer = signals.odometer as OdometerSignal | undefined;
  if (!odometer) return signals;
  return {
    ...signals,
    odometer: {
      km: round2(odometer.km),
      miles: round2(kmToMiles(odometer.km)),
      as_of: odometer.as_of,
      source: odometer.source,
    },
  };
}

export function presentVehicle(vehicle: VehicleRecord) {
  return {
    id: vehicle.id,
    name: vehicle.name,
    license_plate: vehicle.licensePlate,
    vin: vehicle.vin,
    make: vehicle.make,
    model: vehicle.model,
    year: vehicle.year,
    telematics_provider: vehicle.telematicsProvider,
    as_of: vehicle.asOf ? vehicle.asOf.toISOString() : null,
    updated_at: vehicle.updatedAt.toISOString(),
    health: vehicle.health,
    signals: presentSignals(vehicle.signals),
    link_broken: vehicle.linkBroken,
  };
}

export function presentAdminVehicle(vehicle: VehicleRecord) {
  return {
    ...presentVehicle(vehicle),
    company_id: vehicle.companyId,
    active: vehicle.active,
    provider_vehicle_id: vehicle.providerVehicleId,
    provider_connection_id: vehicle.providerConnectionId,
    home_location_id: vehicle.homeLocationId,
  };
}
