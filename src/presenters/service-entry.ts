/** A service entry as the operator API shows it: the odometer in miles, as it was given. */
import type { ServiceEntryRecord } from '../db/service-entries.js';
import { kmToMiles, round2 } from '../domain/units.js';

export function presentServiceEntry(entry: ServiceEntryRecord) {
  return {
    id: entry.id,
    vehicle_id: entry.vehicleId,
    type: entry.type,
    performed_at: entry.performedAt.toISOString(),
    odometer_miles: entry.odometerKm === null ? null : round2(kmToMiles(entry.odometerKm)),
    notes: entry.notes,
    created_at: entry.createdAt.toISOString(),
  };
}
