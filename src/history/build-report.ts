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
  listPredictionRecords,
  listServiceEntriesOfVehicles,
  listVinVehicles,
} from '../db/history.js';
import { listOwnerships } from '../db/ownership.js';
import type { Queryable } from '../db/pool.js';
import { strongBrakingG } from '../domain/incidents.js';
import { assembleHistoryReport, rangeStart, vehiclePredictions } from './assemble.js';
import { daysToInspect } from './odometer-series.js';
import type { VehiclePredictions } from '../domain/predictions.js';
import type { HistoryReport, ReportTier } from './types.js';
import { modelYearOf } from '../domain/vin.js';

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
 * The `predictions` of premium monitoring events (docs/monitoring.md "Predictions (premium)") for these vehicles, by vehicle id
 * (assemble.ts `vehiclePredictions`): three statements for all of them, grouped once by vehicle.
 * What is read is what the forecasts need: one summary row per vehicle of the odometer and
 * driving rollups (db/history.ts `listPredictionRecords`), and its completed runs and service
 * entries (a handful per vehicle and year).
 *
 * It runs in the health transaction, with the vehicles locked: a premium event's body, predictions
 * included, is stored with the detector state that produced it, so an attempt sends what was
 * detected, and only the vehicles with a premium event this evaluation are read. Reading them
 * before the locks would cost every evaluation of a premium vehicle, most of which detect nothing.
 */
export async function loadVehiclePredictions(
  q: Queryable,
  vehicleIds: readonly string[],
  now: Date,
): Promise<Map<string, VehiclePredictions>> {
  const predictions = new Map<string, VehiclePredictions>();
  if (vehicleIds.length === 0) return predictions;
  const records = await listPredictionRecords(q, vehicleIds);
  const runs = byVehicle(await listCompletedRuns(q, vehicleIds, null));
  const serviceEntries = byVehicle(await listServiceEntriesOfVehicles(q, vehicleIds, null));
  for (const { id, ...record } of records) {
    predictions.set(
      id,
      vehiclePredictions({ ...record, runs: runs.get(id) ?? [], serviceEntries: serviceEntries.get(id) ?? [], now }),
    );
  }
  return predictions;
}

function byVehicle<T extends { vehicleId: string }>(rows: readonly T[]): Map<string, T[]> {
  const grouped = new Map<string, T[]>();
  for (const row of rows) {
    const list = grouped.get(row.vehicleId);
    if (list) list.push(row);
    else grouped.set(row.vehicleId, [row]);
  }
  return grouped;
}
