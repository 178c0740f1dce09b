/**
 * Loaders of the history report (src/history/build-report.ts): everything held for one VIN
 * across every company's vehicle rows, inside the tier's data range. They read the rollups
 * (db/history-rollups.ts) and small tables, never a range of raw readings: the only raw reads are
 * the odometer readings of the few days whose checkpoint shows a drop, and one location per
 * incident. `from` null means all available (the lifetime tier).
 */
import { ownedSinceSql } from './ownership.js';
import type { Queryable } from './pool.js';

export interface VinVehicle {
  id: string;
  make: string | null;
  model: string | null;
  year: number | null;
  createdAt: Date;
  /** The read model's latest signals (battery, oil life, brake lining for the predictions). */
  signals: Record<string, unknown>;
}

/** Every vehicle row with the VIN, any company, active or not, oldest first. */
export async function listVinVehicles(q: Queryable, vin: string): Promise<VinVehicle[]> {
  const result = await q.query<VinVehicle>({
    name: 'history-vin-vehicles',
    text: `SELECT id, make, model, year, created_at AS "createdAt", signals FROM vehicles
           WHERE vin = $1 ORDER BY created_at, id`,
    values: [vin],
  });
  return result.rows;
}

/**
 * What the forecasts of a vehicle whose monitoring events carry predictions read (history/
 * assemble.ts `vehiclePredictions`), summed up in SQL: its read model, the ends of its distance
 * series (the ECU odometer, else the GPS-derived one: history/odometer-series.ts), and its current
 * owner's harsh braking rate's terms.
 */
export interface PredictionRecord {
  id: string;
  signals: Record<string, unknown>;
  /** The series' first and last readings; null without any. */
  firstOdometer: { at: Date; km: number } | null;
  lastOdometer: { at: Date; km: number } | null;
  /**
   * The series' last reading before the UTC day the current owner got the vehicle from a previous
   * owner began (db/ownership.ts `ownedSinceSql`); null when it never changed hands or nothing
   * was read before: the owner's miles then count from the first reading.
   */
  ownerStartKm: number | null;
  /** Hard brakes of the current owner's UTC days (every day when it never changed hands). */
  ownerHardBrakes: number;
}

/**
 * One row per vehicle, each figure one index range of the rollups (odometer_daily, driving_daily):
 * the series' ends are the first and last checkpoints (a day whose raw readings the report loads
 * has the same first and last reading as its checkpoint), never a vehicle's every day.
 */
export async function listPredictionRecords(q: Queryable, ids: readonly string[]): Promise<PredictionRecord[]> {
  type Row = Omit<PredictionRecord, 'firstOdometer' | 'lastOdometer'> & {
    firstAt: Date | null;
    firstKm: number | null;
    lastAt: Date | null;
    lastKm: number | null;
  };
  const result = await q.query<Row>({
    name: 'history-prediction-records',
    text: `WITH v AS (
             SELECT v.id, v.signals, (${ownedSinceSql('v.id')} AT TIME ZONE 'UTC')::date AS owner_day,
                    CASE WHEN EXISTS (SELECT FROM odometer_daily o WHERE o.vehicle_id = v.id AND o.signal = 'odometer_km')
                         THEN 'odometer_km' ELSE 'gps_odometer_km' END AS signal
             FROM vehicles v WHERE v.id = ANY($1::uuid[])
           )
           SELECT v.id, v.signals,
                  f.at AS "firstAt", f.km AS "firstKm", l.at AS "lastAt", l.km AS "lastKm",
                  b.km AS "ownerStartKm", h.hard_brakes AS "ownerHardBrakes"
           FROM v
           LEFT JOIN LATERAL (
             SELECT first_at AS at, first_km AS km FROM odometer_daily o
             WHERE o.vehicle_id = v.id AND o.signal = v.signal ORDER BY o.day, o.first_at LIMIT 1
           ) f ON true
           LEFT JOIN LATERAL (
             SELECT last_at AS at, last_km AS km FROM odometer_daily o
             WHERE o.vehicle_id = v.id AND o.signal = v.signal ORDER BY o.day DESC, o.last_at DESC LIMIT 1
           ) l ON true
           LEFT JOIN LATERAL (
             SELECT last_km AS km FROM odometer_daily o
             WHERE o.vehicle_id = v.id AND o.signal = v.signal AND o.day < v.owner_day
             ORDER BY o.day DESC, o.last_at DESC LIMIT 1
           ) b ON true
           CROSS JOIN LATERAL (
             SELECT coalesce(sum(d.hard_brakes), 0)::int AS hard_brakes FROM driving_daily d
             WHERE d.vehicle_id = v.id AND d.day >= coalesce(v.owner_day, '-infinity'::date)
           ) h`,
    values: [ids],
  });
  return result.rows.map(({ firstAt, firstKm, lastAt, lastKm, ...row }) => ({
    ...row,
    firstOdometer: firstAt && firstKm !== null ? { at: firstAt, km: firstKm } : null,
    lastOdometer: lastAt && lastKm !== null ? { at: lastAt, km: lastKm } : null,
  }));
}

export interface OdometerDay {
  vehicleId: string;
  /** YYYY-MM-DD (UTC). */
  day: string;
  signal: string;
  source: string;
  firstAt: Date;
  firstKm: number;
  lastAt: Date;
  lastKm: number;
  minKm: number;
  maxKm: number;
  readings: number;
}

export async function listOdometerDays(
  q: Queryable,
  vehicleIds: readonly string[],
  from: Date | null,
): Promise<OdometerDay[]> {
  const result = await q.query<OdometerDay>({
    name: 'history-odometer-days',
    text: `SELECT vehicle_id AS "vehicleId", to_char(day, 'YYYY-MM-DD') AS day, signal, source,
                  first_at AS "firstAt", first_km AS "firstKm", last_at AS "lastAt", last_km AS "lastKm",
                  min_km AS "minKm", max_km AS "maxKm", readings
           FROM odometer_daily
           WHERE vehicle_id = ANY($1::uuid[]) AND ($2::timestamptz IS NULL OR last_at >= $2)
           ORDER BY day, first_at`,
    values: [vehicleIds, from],
  });
  return result.rows;
}

export interface DrivingDay {
  vehicleId: string;
  day: string;
  speedSamples: number;
  movingSamples: number;
  highwaySamples: number;
  movingKphSum: number;
  trips: number;
  hardBrakes: number;
  hardAccels: number;
}

export async function listDrivingDays(
  q: Queryable,
  vehicleIds: readonly string[],
  from: Date | null,
): Promise<DrivingDay[]> {
  const result = await q.query<DrivingDay>({
    name: 'history-driving-days',
    text: `SELECT vehicle_id AS "vehicleId", to_char(day, 'YYYY-MM-DD') AS day, speed_samples AS "speedSamples",
                  moving_samples AS "movingSamples", highway_samples AS "highwaySamples", moving_kph_sum AS "movingKphSum",
                  trips, hard_brakes AS "hardBrakes", hard_accels AS "hardAccels"
           FROM driving_daily
           WHERE vehicle_id = ANY($1::uuid[]) AND ($2::timestamptz IS NULL OR day >= ($2::timestamptz AT TIME ZONE 'UTC')::date)
           ORDER BY day`,
    values: [vehicleIds, from],
  });
  return result.rows;
}

export interface OdometerReadingRow {
  vehicleId: string;
  signal: string;
  source: string;
  at: Date;
  km: number;
}

/** Raw odometer readings of a few (vehicle, UTC day) pairs: the days whose checkpoint shows a drop. */
export async function listOdometerReadingsOfDays(
  q: Queryable,
  days: ReadonlyArray<{ vehicleId: string; day: string }>,
): Promise<OdometerReadingRow[]> {
  if (days.length === 0) return [];
  const result = await q.query<OdometerReadingRow>({
    name: 'history-odometer-readings-of-days',
    text: `SELECT r.vehicle_id AS "vehicleId", r.signal, r.source, r.recorded_at AS at, r.value_num AS km
           FROM unnest($1::uuid[], $2::date[]) AS d(vehicle_id, day)
           JOIN readings r ON r.vehicle_id = d.vehicle_id AND r.signal IN ('odometer_km', 'gps_odometer_km')
             AND r.recorded_at >= d.day::timestamp AT TIME ZONE 'UTC'
             AND r.recorded_at < (d.day + 1)::timestamp AT TIME ZONE 'UTC'
           WHERE r.value_num IS NOT NULL
           ORDER BY r.recorded_at`,
    values: [days.map((d) => d.vehicleId), days.map((d) => d.day)],
  });
  return result.rows;
}

export interface CompletedRunRow {
  vehicleId: string;
  completedAt: Date;
  title: string | null;
  itemTypes: string[];
  completedOdometerKm: number | null;
  /** The dispatched assignee's name when it is a shop. */
  shop: string | null;
}

export async function listCompletedRuns(
  q: Queryable,
  vehicleIds: readonly string[],
  from: Date | null,
): Promise<CompletedRunRow[]> {
  const result = await q.query<CompletedRunRow>({
    name: 'history-completed-runs',
    text: `SELECT vehicle_id AS "vehicleId", completed_at AS "completedAt", title,
                  coalesce((SELECT array_agg(DISTINCT i ->> 'type') FROM jsonb_array_elements(items) i WHERE i ->> 'type' IS NOT NULL),
                           '{}') AS "itemTypes",
                  completed_odometer_km AS "completedOdometerKm",
                  CASE WHEN dispatch_proposal -> 'assignee' ->> 'type' = 'shop'
                       THEN dispatch_proposal -> 'assignee' ->> 'name' END AS shop
           FROM runs
           WHERE vehicle_id = ANY($1::uuid[]) AND status = 'completed' AND completed_at IS NOT NULL
             AND ($2::timestamptz IS NULL OR completed_at >= $2)
           ORDER BY completed_at`,
    values: [vehicleIds, from],
  });
  return result.rows;
}

export interface ServiceEntryRow {
  vehicleId: string;
  type: string;
  performedAt: Date;
  odometerKm: number | null;
}

export async function listServiceEntriesOfVehicles(
  q: Queryable,
  vehicleIds: readonly string[],
  from: Date | null,
): Promise<ServiceEntryRow[]> {
  const result = await q.query<ServiceEntryRow>({
    name: 'history-service-entries',
    text: `SELECT vehicle_id AS "vehicleId", type, performed_at AS "performedAt", odometer_km AS "odometerKm"
           FROM service_entries
           WHERE vehicle_id = ANY($1::uuid[]) AND ($2::timestamptz IS NULL OR performed_at >= $2)
           ORDER BY performed_at`,
    values: [vehicleIds, from],
  });
  return result.rows;
}

export interface IncidentEventRow {
  vehicleId: string;
  kind: string;
  at: Date;
  g: number | null;
  /** The location reading nearest the event within 10 minutes, if any. */
  lat: number | null;
  lon: number | null;
}

/**
 * Impact and airbag events and braking events of at least `minBrakingG`, each with the location
 * reading nearest to it (10 minutes at most).
 */
export async function listIncidentEvents(
  q: Queryable,
  vehicleIds: readonly string[],
  from: Date | null,
  minBrakingG: number,
): Promise<IncidentEventRow[]> {
  const result = await q.query<IncidentEventRow>({
    name: 'history-incident-events',
    text: `SELECT e.vehicle_id AS "vehicleId", e.kind, e.recorded_at AS at, e.g,
                  (l.value_json ->> 'lat')::float8 AS lat, (l.value_json ->> 'lon')::float8 AS lon
           FROM vehicle_events e
           LEFT JOIN LATERAL (
             SELECT value_json FROM readings r
             WHERE r.vehicle_id = e.vehicle_id AND r.signal = 'location'
               AND r.recorded_at BETWEEN e.recorded_at - interval '10 minutes' AND e.recorded_at + interval '10 minutes'
             ORDER BY abs(extract(epoch FROM r.recorded_at - e.recorded_at)) LIMIT 1
           ) l ON true
           WHERE e.vehicle_id = ANY($1::uuid[])
             AND (e.kind IN ('impact', 'airbag_deployment') OR (e.kind = 'hard_brake' AND abs(e.g) >= $3))
             AND ($2::timestamptz IS NULL OR e.recorded_at >= $2)
           ORDER BY e.recorded_at`,
    values: [vehicleIds, from, minBrakingG],
  });
  return result.rows;
}
