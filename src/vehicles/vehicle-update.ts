/**
 * PUT /vehicles/{id}: the integrator may set license_plate, name and odometer_miles. An odometer
 * write is a reading taken now with source `manual`, visible in signals.odometer.
 */
import type { OdometerSignal, VehicleRecord } from '../domain/vehicle.js';
import { AppError, notFound } from '../errors.js';
import { upsertReadingRollups } from '../db/history-rollups.js';
import { insertReadings } from '../db/readings.js';
import { writeLatestState } from '../db/vehicle-state.js';
import { findVehicle, lockVehicle, updateVehicleAttributes, type VehicleAttributePatch } from '../db/vehicles.js';
import type { PoolClient } from '../db/pool.js';
import { decideManualOdometer } from './manual-odometer.js';

export interface VehicleUpdate {
  name?: string | null;
  licensePlate?: string | null;
  odometerMiles?: number;
}

export async function updateVehicleByIntegrator(
  tx: PoolClient,
  companyId: string,
  vehicleId: string,
  update: VehicleUpdate,
  now: Date,
): Promise<VehicleRecord> {
  const vehicle = await lockVehicle(tx, companyId, vehicleId);
  if (!vehicle || !vehicle.active) throw notFound('vehicle');

  if (update.odometerMiles !== undefined) {
    const decision = decideManualOdometer(
      {
        telematicsProvider: vehicle.telematicsProvider,
        odometer: (vehicle.signals.odometer as OdometerSignal | undefined) ?? null,
        ecuOdometerAt: vehicle.ecuOdometerAt,
        linkBroken: vehicle.linkBroken,
      },
      update.odometerMiles,
      now,
    );
    if (!decision.ok) throw new AppError('ODOMETER_CONFLICT', decision.message, { reason: decision.reason });
    const stored = await insertReadings(tx, [
      { vehicleId, signal: 'odometer_km', recordedAt: now, valueNum: decision.km, valueJson: null, source: 'manual' },
    ]);
    await upsertReadingRollups(tx, stored.rolled);
    // The same latest-state path as provider samples: newer wins, signals rebuilt, updated_at moves.
    await writeLatestState(tx, [
      { vehicleId, signal: 'odometer_km', recordedAt: now, value: decision.km, source: 'manual' },
    ]);
  }

  const patch: VehicleAttributePatch = {};
  if (update.name !== undefined) patch.name = update.name;
  if (update.licensePlate !== undefined) patch.licensePlate = update.licensePlate;
  // The attribute update returns the row as it now is (odometer included); without one, read it.
  if (Object.keys(patch).length > 0) return (await updateVehicleAttributes(tx, companyId, vehicleId, patch))!;
  return (await findVehicle(tx, companyId, vehicleId))!;
}
