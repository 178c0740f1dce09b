/**
 * POST /admin/v1/vehicles/:id/transfer (docs/operator-api.md): the vehicle moves to another company at `at`
 * (default now). The old span of vehicle_ownerships ends and a new one starts at the same instant;
 * the vehicle's readings, rollups and service records stay with it (the history report follows
 * the VIN). What tied the vehicle to the old company is let go (db/ownership.ts), and the old
 * company's monitoring subscriptions on it end. An open run belongs to the old company's work, so
 * it must be completed or dismissed first.
 *
 * The new owner sees the vehicle's data only from `at` on (docs/ownership.md): the
 * latest state (the read model) keeps the odometer and what was taken from `at` on, and the
 * health state restarts from the link state (the trusted odometer) and is evaluated over the new
 * span, all in this transaction. Every later read (live detectors, dry run, `signals`) starts at
 * the new span by itself. The caller hands that evaluation's summary, after the commit, to
 * requestAfterEvaluation: health events of the new span (a transfer dated in the past brings
 * samples) are for the runs stage, monitoring deliveries for their lanes.
 */
import type { VehicleRecord } from '../domain/vehicle.js';
import { findCompany } from '../db/companies.js';
import {
  endOwnership,
  endVehicleSubscriptions,
  lockCurrentOwnership,
  moveVehicleToCompany,
  startOwnership,
} from '../db/ownership.js';
import type { PoolClient } from '../db/pool.js';
import { lockOpenRunOfVehicle } from '../db/runs.js';
import { dropReadModelBefore } from '../db/vehicle-state.js';
import { findVehicle, lockVehicle } from '../db/vehicles.js';
import { AppError, invalidRequest, notFound } from '../errors.js';
import { restartHealthForNewOwner, type EvaluationSummary } from '../evaluation/evaluate-vehicles.js';

export async function transferVehicle(
  tx: PoolClient,
  fromCompanyId: string,
  vehicleId: string,
  toCompanyId: string,
  at: Date | null,
  now: Date,
): Promise<{ vehicle: VehicleRecord; evaluation: EvaluationSummary | null }> {
  const vehicle = await lockVehicle(tx, fromCompanyId, vehicleId);
  if (!vehicle) throw notFound('vehicle');
  if (!(await findCompany(tx, toCompanyId))) throw notFound('company');
  if (toCompanyId === fromCompanyId) {
    throw new AppError('INVALID_STATE_TRANSITION', 'the vehicle already belongs to this company');
  }
  if (await lockOpenRunOfVehicle(tx, vehicleId)) {
    throw new AppError('INVALID_STATE_TRANSITION', 'the vehicle has an open run: complete or dismiss it first');
  }
  const when = at ?? now;
  if (when.getTime() > now.getTime()) throw invalidRequest([{ field: 'at', message: 'must not be in the future' }]);
  const current = await lockCurrentOwnership(tx, vehicleId);
  // A vehicle row written without its span (not through insertVehicle) was held since its creation.
  if (!current) await startOwnership(tx, vehicleId, fromCompanyId, vehicle.createdAt);
  if (current && when.getTime() < current.startedAt.getTime()) {
    throw invalidRequest([
      {
        field: 'at',
        message: `must not be before the current owner got the vehicle (${current.startedAt.toISOString()})`,
      },
    ]);
  }
  await endOwnership(tx, vehicleId, when);
  await startOwnership(tx, vehicleId, toCompanyId, when);
  await moveVehicleToCompany(tx, vehicleId, toCompanyId);
  await dropReadModelBefore(tx, vehicleId, when);
  await endVehicleSubscriptions(tx, vehicleId, fromCompanyId);
  const evaluation = await restartHealthForNewOwner(tx, vehicleId, now);
  return { vehicle: (await findVehicle(tx, toCompanyId, vehicleId))!, evaluation };
}
