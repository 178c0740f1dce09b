import type { OdometerSignal, VehicleRecord } from '../../domain/vehicle.js';
import { kmToMiles, round2 } from '../../domain/units.js';
import type { Vehicle } from '../schemas/vehicle.js';

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

export function presentVehicle(vehicle: VehicleRecord): Vehicle {
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
