/**
 * The history report from the records loaded for a VIN (build-report.ts): a pure function of its
 * input and `now`. Sections by tier (docs/history-report.md): a section outside the
 * tier is null, an included one with no records is []. Every tier carries odometer_integrity.
 */
import type {
  CompletedRunRow,
  DrivingDay,
  IncidentEventRow,
  OdometerDay,
  OdometerReadingRow,
  PredictionRecord,
  ServiceEntryRow,
  VinVehicle,
} from '../db/history.js';
import type { OwnershipSpan } from '../db/ownership.js';
import { kmToMiles } from '../domain/units.js';
import { checkOdometerIntegrity, roundMiles, streamKey, toReading } from './integrity.js';
import { distanceSeries, monthlyKm, odometerPoints } from './odometer-series.js';
import {
  incidents,
  lifetimeMetrics,
  ownership,
  predictionsOf,
  predictiveInsights,
  serviceHistory,
  type LatestSignals,
  type Prediction,
} from './sections.js';
import type { VehiclePredictions } from '../domain/predictions.js';
import type { HistoryReport, ReportTier } from './types.js';

/** Months of data each tier covers; null = all available. */
export const tierMonths: Readonly<Record<ReportTier, number | null>> = {
  basic: 6,
  standard: 12,
  comprehensive: 36,
  lifetime: null,
};

const tierRank: Readonly<Record<ReportTier, number>> = { basic: 0, standard: 1, comprehensive: 2, lifetime: 3 };

/** Whether `tier` includes what `minimum` introduces (each tier includes the ones below it). */
export function tierIncludes(tier: ReportTier, minimum: ReportTier): boolean {
  return tierRank[tier] >= tierRank[minimum];
}

/** The start of the tier's data range: `now` minus its months (UTC calendar months), or null. */
export function rangeStart(tier: ReportTier, now: Date): Date | null {
  const months = tierMonths[tier];
  if (months === null) return null;
  const from = new Date(now);
  from.setUTCMonth(from.getUTCMonth() - months);
  return from;
}

export interface HistoryInput {
  vin: string;
  tier: ReportTier;
  reportId: string;
  now: Date;
  /** Model year decoded from the VIN, used when no vehicle row has one. */
  vinModelYear: number | null;
  vehicles: readonly VinVehicle[];
  ownerships: readonly OwnershipSpan[];
  odometerDays: readonly OdometerDay[];
  /** Raw readings of the days whose checkpoint shows a drop (odometer-series.ts daysToInspect). */
  dayReadings: readonly OdometerReadingRow[];
  drivingDays: readonly DrivingDay[];
  runs: readonly CompletedRunRow[];
  serviceEntries: readonly ServiceEntryRow[];
  incidentEvents: readonly IncidentEventRow[];
}

function numberSignal(signals: Record<string, unknown>, name: string): { value: number; at: string | null } | null {
  const value = signals[name];
  if (typeof value !== 'number' || !Number.isFinite(value)) return null;
  const observed = signals.observed_at as Record<string, unknown> | undefined;
  const at = observed?.[name];
  return { value, at: typeof at === 'string' ? at : null };
}

/** The latest battery, oil life and brake lining values of a vehicle's read model `signals`. */
function latestSignals(signals: Record<string, unknown>): LatestSignals {
  const battery = numberSignal(signals, 'battery_voltage');
  const oil = numberSignal(signals, 'oil_life_percent');
  const brake = numberSignal(signals, 'brake_lining_percent');
  return {
    batteryVoltage: battery && { volts: battery.value, at: battery.at },
    oilLifePercent: oil && { percent: oil.value, at: oil.at },
    brakeLiningPercent: brake && { percent: brake.value, at: brake.at },
  };
}

/** Make, model and year from the newest vehicle row that has each. */
function vehicleSection(vehicles: readonly VinVehicle[], vinModelYear: number | null): HistoryReport['vehicle'] {
  const newestFirst = [...vehicles].reverse();
  const pick = <K extends 'make' | 'model' | 'year'>(key: K) => newestFirst.find((v) => v[key] !== null)?.[key] ?? null;
  return { make: pick('make'), model: pick('model'), year: pick('year') ?? vinModelYear, trim: null };
}

export function assembleHistoryReport(input: HistoryInput): HistoryReport {
  const { tier, now } = input;
  const from = rangeStart(tier, now);
  const inRange = (at: Date) => from === null || at.getTime() >= from.getTime();

  const points = odometerPoints(input.odometerDays, input.dayReadings, from);
  const series = distanceSeries(points);
  const integrity = checkOdometerIntegrity(points);
  const runs = input.runs.filter((r) => inRange(r.completedAt));
  const entries = input.serviceEntries.filter((e) => inRange(e.performedAt));
  const events = input.incidentEvents.filter((e) => inRange(e.at));

  const firstTimes = [
    points[0]?.at,
    input.drivingDays[0] && new Date(`${input.drivingDays[0].day}T00:00:00Z`),
    runs[0]?.completedAt,
    entries[0]?.performedAt,
    events[0]?.at,
  ].filter((at): at is Date => at instanceof Date && inRange(at));
  const firstRecorded = firstTimes.length > 0 ? new Date(Math.min(...firstTimes.map((at) => at.getTime()))) : null;

  const metrics = lifetimeMetrics(series, input.drivingDays, firstRecorded);
  const service = serviceHistory(runs, entries, points);

  const flagged = new Set(
    integrity.flags.flatMap((flag) => flag.readings.map((r) => `${r.at}\u0000${r.source}\u0000${r.miles}`)),
  );
  // One timeline point per stream and day (its last reading), plus every reading a flag names.
  const lastOfDay = new Map<string, (typeof points)[number]>();
  for (const point of points) lastOfDay.set(`${streamKey(point)}\u0000${point.at.toISOString().slice(0, 10)}`, point);
  const timeline = points
    .filter((point) => {
      const reading = toReading(point);
      return (
        lastOfDay.get(`${streamKey(point)}\u0000${point.at.toISOString().slice(0, 10)}`) === point ||
        flagged.has(`${reading.at}\u0000${reading.source}\u0000${reading.miles}`)
      );
    })
    .map((point) => {
      const reading = toReading(point);
      return { ...reading, flagged: flagged.has(`${reading.at}\u0000${reading.source}\u0000${reading.miles}`) };
    });

  return {
    report_id: input.reportId,
    vin: input.vin,
    tier,
    generated_at: now.toISOString(),
    data_range: { from: from ? from.toISOString() : null, to: now.toISOString() },
    vehicle: vehicleSection(input.vehicles, input.vinModelYear),
    lifetime_metrics: metrics,
    service_history: service,
    incidents: tierIncludes(tier, 'standard') ? incidents(events) : null,
    ownership: tierIncludes(tier, 'standard')
      ? ownership(input.ownerships, series, input.drivingDays, from, now)
      : null,
    telematics: tierIncludes(tier, 'comprehensive')
      ? {
          monthly_mileage: monthlyKm(series).map((m) => ({ month: m.month, miles: roundMiles(kmToMiles(m.km)) })),
          odometer_timeline: timeline,
        }
      : null,
    predictive_insights: tierIncludes(tier, 'lifetime')
      ? predictiveInsights(
          service,
          series,
          metrics,
          latestSignals(input.vehicles[input.vehicles.length - 1]?.signals ?? {}),
          now,
        )
      : null,
    odometer_integrity: integrity,
  };
}

export interface PredictionInput extends Omit<PredictionRecord, 'id'> {
  runs: readonly CompletedRunRow[];
  serviceEntries: readonly ServiceEntryRow[];
  now: Date;
}

/**
 * One vehicle's forecasts as the lifetime report makes them (the same sections over the same
 * records: its odometer and service history, which travel with the car, and its read model),
 * except that the harsh braking rate is its current owner's (docs/ownership.md): the hard brakes
 * of the owner's UTC days over the miles driven since the first of them began, both terms of one
 * span. A forecast resting on no record of the vehicle is null.
 */
export function vehiclePredictions(input: PredictionInput): VehiclePredictions {
  const { firstOdometer: first, lastOdometer: last } = input;
  const startKm = input.ownerStartKm ?? first?.km ?? null;
  const braking = {
    hardBrakes: input.ownerHardBrakes,
    miles: last && startKm !== null ? kmToMiles(last.km - startKm) : 0,
  };
  // The forecasts read each service's type, date and mileage, not whether telematics verified it: no odometer points.
  const service = serviceHistory(input.runs, input.serviceEntries, []);
  const forecasts = predictionsOf(service, { first, last }, braking, latestSignals(input.signals), input.now);
  const known = (forecast: Prediction) => (forecast.known ? forecast.text : null);
  return {
    next_oil_change: known(forecasts.next_oil_change),
    brake_replacement: known(forecasts.brake_replacement),
    battery_health: known(forecasts.battery_health),
  };
}
