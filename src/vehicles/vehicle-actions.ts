/**
 * What finding, updating and refreshing a company's vehicle do, shared by the public API
 * (src/api/routes/vehicles.ts) and the developer console, so both take the same code path.
 */
import { adapters, isProviderId } from '../../providers/index.js';
import { withTransaction, type Pool } from '../db/pool.js';
import { findActiveVehicle } from '../db/vehicles.js';
import { isRecordId } from '../domain/ids.js';
import type { VehicleRecord } from '../domain/vehicle.js';
import { AppError, notFound } from '../errors.js';
import type { Logger } from '../log.js';
import { enqueueAfterCommit } from '../queue/after-commit.js';
import { enqueueHealthEvaluations } from '../queue/enqueue-health.js';
import { requestRefresh } from '../queue/enqueue-ingest.js';
import type { Queues } from '../queue/queues.js';
import { updateVehicleByIntegrator, type VehicleUpdate } from './vehicle-update.js';

/** The company's active vehicle, or 404 (another company's vehicle is not found either). */
export async function requireVehicle(pool: Pool, companyId: string, vehicleId: string): Promise<VehicleRecord> {
  const vehicle = isRecordId(vehicleId) ? await findActiveVehicle(pool, companyId, vehicleId) : null;
  if (!vehicle) throw notFound('vehicle');
  return vehicle;
}

/** The integrator's update (src/vehicles/vehicle-update.ts); a new odometer re-evaluates the vehicle's health. */
export async function updateVehicle(
  deps: { pool: Pool; queues: Queues; now: () => Date },
  log: Pick<Logger, 'warn'>,
  companyId: string,
  vehicleId: string,
  update: VehicleUpdate,
): Promise<VehicleRecord> {
  if (!isRecordId(vehicleId)) throw notFound('vehicle');
  const vehicle = await withTransaction(deps.pool, (tx) =>
    updateVehicleByIntegrator(tx, companyId, vehicleId, update, deps.now()),
  );
  if (update.odometerMiles !== undefined) {
    // A new odometer can change maintenance due and the tracker link.
    await enqueueAfterCommit(log, 'health.sweep', () => enqueueHealthEvaluations(deps.queues, [vehicleId], true));
  }
  return vehicle;
}

export interface RefreshQueued {
  refreshId: string;
  provider: string;
  cascade: boolean;
}

/**
 * Queues a pull of the vehicle from its provider (concurrent refreshes of one vehicle with the same
 * cascade coalesce). 400 REFRESH_NOT_SUPPORTED for providers that push and manually tracked
 * vehicles, 501 REFRESH_NOT_IMPLEMENTED for providers without a pull.
 */
export async function refreshVehicle(
  deps: { pool: Pool; queues: Queues },
  companyId: string,
  vehicleId: string,
  cascade: boolean,
): Promise<RefreshQueued> {
  const vehicle = await requireVehicle(deps.pool, companyId, vehicleId);
  const provider = vehicle.telematicsProvider;
  if (!provider || !isProviderId(provider) || adapters[provider].refresh === 'unsupported') {
    throw new AppError(
      'REFRESH_NOT_SUPPORTED',
      provider ? `${provider} vehicles cannot be asked for data; they push it` : 'the vehicle is tracked manually',
    );
  }
  if (adapters[provider].refresh === 'not_implemented') {
    throw new AppError('REFRESH_NOT_IMPLEMENTED', `refresh is not implemented for ${provider}`);
  }
  if (!vehicle.providerConnectionId || !vehicle.providerVehicleId) {
    throw new AppError(
      'REFRESH_NOT_SUPPORTED',
      'the vehicle has no provider connection and provider vehicle id to pull with',
    );
  }
  const queued = await requestRefresh(deps.queues, vehicleId, cascade);
  return { refreshId: queued.refreshId, provider, cascade: queued.cascade };
}
