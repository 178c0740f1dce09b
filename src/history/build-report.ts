/**
 * Loads every record held for a VIN inside the tier's data range (db/history.ts: rollups, small
 * tables, and raw readings only of the few days whose checkpoint shows a drop) and assembles the
 * report (assemble.ts). Reads only: the same VIN, tier and time give the same report.
 */
import {
  listCompletedRuns,
  listDrivingDays,
  listIncidentEvents,
  listOdometerDays,
  listOdometerReadingsOfDays,
  listPredictionVehicles,
  listServiceEntriesOfVehicles,
  listVinVehicles,
} from '../db/history.js';
import { listOwnerships } from '../db/ownership.js';
import type { Queryable } from '../db/pool.js';
import { strongBrakingG } from '../monitoring/incidents.js';
import { assembleHistoryReport, rangeStart, vehiclePredictions } from './assemble.js';
import { daysToInspect } from './odometer-series.js';
import type { HistoryReport, ReportTier, VehiclePredictions } from './types.js';
import { modelYearOf } from './vin.js';

export interface HistoryReportRequest {
  /** A VIN checkVin accepted (upper case). */
  vin: string;
  tier: ReportTier;
  reportId: string;
  now: Date;
}

/** null when no company's vehicle has the VIN. */
export async function buildHistoryReport(q: Queryable, request: HistoryReportRequest): Promise<HistoryReport | null> {
  const vehicles = await listVinVehicles(q, request.vin);
  if (vehicles.length === 0) return null;
  const ids = vehicles.map((v) => v.id);
  const from = rangeStart(request.tier, request.now);
  // One after another: q may be a transaction client, which must not run overlapping queries.
  const ownerships = await listOwnerships(q, ids);
  const odometerDays = await listOdometerDays(q, ids, from);
  const drivingDays = await listDrivingDays(q, ids, from);
  const runs = await listCompletedRuns(q, ids, from);
  const serviceEntries = await listServiceEntriesOfVehicles(q, ids, from);
  const incidentEvents = await listIncidentEvents(q, ids, from, strongBrakingG);
  const dayReadings = await listOdometerReadingsOfDays(q, daysToInspect(odometerDays));
  return assembleHistoryReport({
    ...request,
    vinModelYear: request.vin.length === 17 ? modelYearOf(request.vin) : null,
    vehicles,
    ownerships,
    odometerDays,
    dayReadings,
    drivingDays,
    runs,
    serviceEntries,
    incidentEvents,
  });
}

/**
 * The `predictions` of premium monitoring events (docs/monitoring.md "Predictions (premium)") for these vehicles, by vehicle id:
 * the lifetime report's forecasts from each vehicle's own records, with the driving of its current
 * owner's span only (assemble.ts `vehiclePredictions`). The same loaders as the report, each one
 * statement for all the vehicles.
 */
export async function loadVehiclePredictions(
  q: Queryable,
  vehicleIds: readonly string[],
  now: Date,
): Promise<Map<string, VehiclePredictions>> {
  const predictions = new Map<string, VehiclePredictions>();
  if (vehicleIds.length === 0) return predictions;
  const vehicles = await listPredictionVehicles(q, vehicleIds);
  const odometerDays = await listOdometerDays(q, vehicleIds, null);
  const drivingDays = await listDrivingDays(q, vehicleIds, null);
  const runs = await listCompletedRuns(q, vehicleIds, null);
  const serviceEntries = await listServiceEntriesOfVehicles(q, vehicleIds, null);
  const dayReadings = await listOdometerReadingsOfDays(q, daysToInspect(odometerDays));
  const of = <T extends { vehicleId: string }>(rows: readonly T[], id: string) =>
    rows.filter((r) => r.vehicleId === id);
  for (const vehicle of vehicles) {
    predictions.set(
      vehicle.id,
      vehiclePredictions({
        signals: vehicle.signals,
        ownedSince: vehicle.ownedSince,
        odometerDays: of(odometerDays, vehicle.id),
        dayReadings: of(dayReadings, vehicle.id),
        drivingDays: of(drivingDays, vehicle.id),
        runs: of(runs, vehicle.id),
        serviceEntries: of(serviceEntries, vehicle.id),
        now,
      }),
    );
  }
  return predictions;
}
