import type { VehicleRecord } from '../domain/vehicle.js';
import { keysetPageSql } from './keyset-page-sql.js';
import { jsonb, type Queryable } from './pool.js';

// updated_at uses clock_timestamp(), the time of the statement rather than of the transaction
// start, so a write that waited on a lock is not stamped before rows pollers already saw.

const vehicleColumns = `id, company_id AS "companyId", name, vin, license_plate AS "licensePlate", make, model, year,
  telematics_provider AS "telematicsProvider", provider_vehicle_id AS "providerVehicleId",
  provider_connection_id AS "providerConnectionId", home_location_id AS "homeLocationId", active, signals, health, link_broken AS "linkBroken", as_of AS "asOf",
  ecu_odometer_at AS "ecuOdometerAt", created_at AS "createdAt", updated_at AS "updatedAt"`;

export type NewVehicle = Pick<
  VehicleRecord,
  | 'name'
  | 'vin'
  | 'licensePlate'
  | 'make'
  | 'model'
  | 'year'
  | 'telematicsProvider'
  | 'providerVehicleId'
  | 'providerConnectionId'
  | 'homeLocationId'
  | 'linkBroken'
>;

/** Inserts a vehicle and opens its first ownership span (the history report's Owner 1). */
export async function insertVehicle(q: Queryable, companyId: string, v: NewVehicle): Promise<VehicleRecord> {
  const result = await q.query<VehicleRecord>(
    `WITH vehicle AS (
       INSERT INTO vehicles (company_id, name, vin, license_plate, make, model, year, telematics_provider,
                             provider_vehicle_id, provider_connection_id, home_location_id, link_broken)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
       RETURNING *
     ), ownership AS (
       INSERT INTO vehicle_ownerships (vehicle_id, company_id, started_at) SELECT id, company_id, created_at FROM vehicle
     )
     SELECT ${vehicleColumns} FROM vehicle`,
    [
      companyId,
      v.name,
      v.vin,
      v.licensePlate,
      v.make,
      v.model,
      v.year,
      v.telematicsProvider,
      v.providerVehicleId,
      v.providerConnectionId,
      v.homeLocationId,
      jsonb(v.linkBroken),
    ],
  );
  return result.rows[0]!;
}

/** One vehicle of the company, active or not (the operator API sees deactivated ones too). */
export async function findVehicle(q: Queryable, companyId: string, id: string): Promise<VehicleRecord | null> {
  const result = await q.query<VehicleRecord>({
    name: 'find-vehicle',
    text: `SELECT ${vehicleColumns} FROM vehicles WHERE id = $1 AND company_id = $2`,
    values: [id, companyId],
  });
  return result.rows[0] ?? null;
}

export async function findActiveVehicle(q: Queryable, companyId: string, id: string): Promise<VehicleRecord | null> {
  const result = await q.query<VehicleRecord>({
    name: 'find-active-vehicle',
    text: `SELECT ${vehicleColumns} FROM vehicles WHERE id = $1 AND company_id = $2 AND active`,
    values: [id, companyId],
  });
  return result.rows[0] ?? null;
}

/**
 * The company's active vehicle with this VIN (instant verification); the most recently updated
 * when the company registered the VIN twice.
 */
export async function findActiveVehicleByVin(
  q: Queryable,
  companyId: string,
  vin: string,
): Promise<VehicleRecord | null> {
  const result = await q.query<VehicleRecord>({
    name: 'find-active-vehicle-by-vin',
    text: `SELECT ${vehicleColumns} FROM vehicles WHERE company_id = $1 AND vin = $2 AND active
           ORDER BY updated_at DESC, id DESC LIMIT 1`,
    values: [companyId, vin],
  });
  return result.rows[0] ?? null;
}

/**
 * Locks the row for the rest of the transaction; writers of one vehicle serialise on it. NO KEY:
 * foreign-key checks of rows that reference the vehicle (runs) are not blocked, so a run update
 * cannot deadlock with a service request holding this lock.
 */
export async function lockVehicle(q: Queryable, companyId: string, id: string): Promise<VehicleRecord | null> {
  const result = await q.query<VehicleRecord>(
    `SELECT ${vehicleColumns} FROM vehicles WHERE id = $1 AND company_id = $2 FOR NO KEY UPDATE`,
    [id, companyId],
  );
  return result.rows[0] ?? null;
}

export interface VehiclePage {
  updatedSince: Date | null;
  limit: number;
  offset: number;
}

/** A page of the company's active vehicles, newest change first: `$1` company, `$2` updated since, `$3` limit, `$4` offset. */
const activeVehiclesPage = `FROM vehicles
  WHERE company_id = $1 AND active AND ($2::timestamptz IS NULL OR updated_at >= $2)
  ORDER BY updated_at DESC, id DESC
  LIMIT $3 OFFSET $4`;

const pageValues = (companyId: string, page: VehiclePage) => [companyId, page.updatedSince, page.limit, page.offset];

/**
 * A page with every row decoded. The API reads versions first (listActiveVehicleVersions); this
 * one is the bare ceiling's query in `npm run bench -- api` (bench/bare-pg-server.ts).
 */
export async function listActiveVehicles(q: Queryable, companyId: string, page: VehiclePage): Promise<VehicleRecord[]> {
  const result = await q.query<VehicleRecord>({
    name: 'list-active-vehicles',
    text: `SELECT ${vehicleColumns} ${activeVehiclesPage}`,
    values: pageValues(companyId, page),
  });
  return result.rows;
}

/**
 * A page of the company's active vehicles next to the cursor row (its `updated_at` as Postgres
 * wrote it, to the microsecond, and id), most recently changed first: further down for 'next',
 * back up for 'previous' (the top when the cursor is null), through vehicles_company_updated.
 */
export async function listActiveVehiclesPage(
  q: Queryable,
  companyId: string,
  direction: 'next' | 'previous',
  cursor: { at: string; id: string } | null,
  limit: number,
): Promise<Array<VehicleRecord & { cursorAt: string }>> {
  const result = await q.query<VehicleRecord & { cursorAt: string }>(
    keysetPageSql(
      {
        table: 'vehicles',
        matching: 'company_id = $1 AND active',
        time: 'updated_at',
        id: 'id',
        idType: 'uuid',
        firstParam: 2,
      },
      `${vehicleColumns}, updated_at::text AS "cursorAt"`,
    ),
    [companyId, direction, cursor?.at ?? null, cursor?.id ?? null, limit],
  );
  return result.rows;
}

/**
 * Row versions for the API's cache of presented vehicles (src/api/vehicle-json-cache.ts): `xmin`,
 * the transaction that wrote the row's visible version, changes with every write to the row
 * (including the last-seen times that leave `updated_at` alone), so (id, version) names one content.
 */
export interface VehicleVersion {
  id: string;
  version: string;
}

export async function findActiveVehicleVersion(q: Queryable, companyId: string, id: string): Promise<string | null> {
  const result = await q.query<{ version: string }>({
    name: 'find-active-vehicle-version',
    text: `SELECT xmin::text AS version FROM vehicles WHERE id = $1 AND company_id = $2 AND active`,
    values: [id, companyId],
  });
  return result.rows[0]?.version ?? null;
}

/** The page of listActiveVehicles, as ids and versions only. */
export async function listActiveVehicleVersions(
  q: Queryable,
  companyId: string,
  page: VehiclePage,
): Promise<VehicleVersion[]> {
  const result = await q.query<VehicleVersion>({
    name: 'list-active-vehicle-versions',
    text: `SELECT id, xmin::text AS version ${activeVehiclesPage}`,
    values: pageValues(companyId, page),
  });
  return result.rows;
}

/** The company's active vehicles among `ids`, each with its version, in no particular order. */
export async function findActiveVehiclesWithVersions(
  q: Queryable,
  companyId: string,
  ids: readonly string[],
): Promise<Array<VehicleRecord & { version: string }>> {
  const result = await q.query<VehicleRecord & { version: string }>({
    name: 'find-active-vehicles-with-versions',
    text: `SELECT ${vehicleColumns}, xmin::text AS version FROM vehicles
           WHERE company_id = $1 AND id = ANY($2::uuid[]) AND active`,
    values: [companyId, ids],
  });
  return result.rows;
}

export async function countActiveVehicles(q: Queryable, companyId: string, updatedSince: Date | null): Promise<number> {
  const result = await q.query<{ total: number }>({
    name: 'count-active-vehicles',
    text: `SELECT count(*) AS total FROM vehicles
           WHERE company_id = $1 AND active AND ($2::timestamptz IS NULL OR updated_at >= $2)`,
    values: [companyId, updatedSince],
  });
  return result.rows[0]!.total;
}

/**
 * Which attributes a patch sets: a field that is absent stays as it is, a field that is present
 * (even as null) is written. updated_at moves only when a value really changes.
 */
export type VehicleAttributePatch = Partial<
  Pick<
    VehicleRecord,
    | 'name'
    | 'licensePlate'
    | 'vin'
    | 'make'
    | 'model'
    | 'year'
    | 'telematicsProvider'
    | 'providerVehicleId'
    | 'providerConnectionId'
    | 'homeLocationId'
    | 'linkBroken'
  >
>;

export async function updateVehicleAttributes(
  q: Queryable,
  companyId: string,
  id: string,
  patch: VehicleAttributePatch,
): Promise<VehicleRecord | null> {
  const has = (key: keyof VehicleAttributePatch) => key in patch;
  const result = await q.query<VehicleRecord>(
    `WITH next AS (
       SELECT id AS n_id,
              CASE WHEN $3 THEN $4 ELSE name END AS n_name,
              CASE WHEN $5 THEN $6 ELSE license_plate END AS n_license_plate,
              CASE WHEN $7 THEN $8 ELSE vin END AS n_vin,
              CASE WHEN $9 THEN $10 ELSE make END AS n_make,
              CASE WHEN $11 THEN $12 ELSE model END AS n_model,
              CASE WHEN $13 THEN $14::integer ELSE year END AS n_year,
              CASE WHEN $15 THEN $16 ELSE telematics_provider END AS n_telematics_provider,
              CASE WHEN $17 THEN $18 ELSE provider_vehicle_id END AS n_provider_vehicle_id,
              CASE WHEN $19 THEN $20::uuid ELSE home_location_id END AS n_home_location_id,
              CASE WHEN $21 THEN $22::jsonb ELSE link_broken END AS n_link_broken,
              CASE WHEN $23 THEN $24::uuid ELSE provider_connection_id END AS n_provider_connection_id
       FROM vehicles WHERE id = $1 AND company_id = $2
     )
     UPDATE vehicles SET
       name = n_name, license_plate = n_license_plate, vin = n_vin, make = n_make, model = n_model, year = n_year,
       telematics_provider = n_telematics_provider, provider_vehicle_id = n_provider_vehicle_id,
       home_location_id = n_home_location_id, link_broken = n_link_broken, provider_connection_id = n_provider_connection_id,
       updated_at = CASE
         WHEN (name, license_plate, vin, make, model, year, telematics_provider, provider_vehicle_id,
               home_location_id, link_broken, provider_connection_id)
              IS DISTINCT FROM
              (n_name, n_license_plate, n_vin, n_make, n_model, n_year, n_telematics_provider,
               n_provider_vehicle_id, n_home_location_id, n_link_broken, n_provider_connection_id)
         THEN clock_timestamp() ELSE updated_at END
     FROM next WHERE id = n_id
     RETURNING ${vehicleColumns}`,
    [
      id,
      companyId,
      has('name'),
      patch.name ?? null,
      has('licensePlate'),
      patch.licensePlate ?? null,
      has('vin'),
      patch.vin ?? null,
      has('make'),
      patch.make ?? null,
      has('model'),
      patch.model ?? null,
      has('year'),
      patch.year ?? null,
      has('telematicsProvider'),
      patch.telematicsProvider ?? null,
      has('providerVehicleId'),
      patch.providerVehicleId ?? null,
      has('homeLocationId'),
      patch.homeLocationId ?? null,
      has('linkBroken'),
      jsonb(patch.linkBroken),
      has('providerConnectionId'),
      patch.providerConnectionId ?? null,
    ],
  );
  return result.rows[0] ?? null;
}

export async function deactivateVehicle(q: Queryable, companyId: string, id: string): Promise<VehicleRecord | null> {
  const result = await q.query<VehicleRecord>(
    `UPDATE vehicles SET active = false, updated_at = CASE WHEN active THEN clock_timestamp() ELSE updated_at END
     WHERE id = $1 AND company_id = $2
     RETURNING ${vehicleColumns}`,
    [id, companyId],
  );
  return result.rows[0] ?? null;
}

export async function listCompanyVehicles(
  q: Queryable,
  companyId: string,
  limit: number,
  offset: number,
): Promise<VehicleRecord[]> {
  const result = await q.query<VehicleRecord>(
    `SELECT ${vehicleColumns} FROM vehicles WHERE company_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
    [companyId, limit, offset],
  );
  return result.rows;
}

/** The owning company of a vehicle, for operator routes that address a vehicle by id alone. */
export async function findVehicleCompanyId(q: Queryable, id: string): Promise<string | null> {
  const result = await q.query<{ companyId: string }>(`SELECT company_id AS "companyId" FROM vehicles WHERE id = $1`, [
    id,
  ]);
  return result.rows[0]?.companyId ?? null;
}

/** The pull target of a vehicle, by id alone (workers act for every company). */
export async function findVehiclePullTarget(
  q: Queryable,
  id: string,
): Promise<{
  connectionId: string | null;
  providerVehicleId: string | null;
  telematicsProvider: string | null;
} | null> {
  const result = await q.query<{
    connectionId: string | null;
    providerVehicleId: string | null;
    telematicsProvider: string | null;
  }>(
    `SELECT provider_connection_id AS "connectionId", provider_vehicle_id AS "providerVehicleId",
            telematics_provider AS "telematicsProvider"
     FROM vehicles WHERE id = $1`,
    [id],
  );
  return result.rows[0] ?? null;
}

/** Replaces the vehicle's health overrides. */
export async function setVehicleHealthConfig(q: Queryable, id: string, config: unknown): Promise<unknown | null> {
  const result = await q.query<{ healthConfig: unknown }>(
    `UPDATE vehicles SET health_config = $2 WHERE id = $1 RETURNING health_config AS "healthConfig"`,
    [id, jsonb(config)],
  );
  return result.rows[0]?.healthConfig ?? null;
}

/** The display name of each of the company's vehicles among `ids` (name, else plate, else VIN), for labels. */
export async function listVehicleLabels(
  q: Queryable,
  companyId: string,
  ids: readonly string[],
): Promise<Map<string, string>> {
  const result = await q.query<{ id: string; label: string }>(
    `SELECT id, coalesce(name, license_plate, vin, id::text) AS label FROM vehicles
     WHERE company_id = $1 AND id = ANY($2::uuid[])`,
    [companyId, ids],
  );
  return new Map(result.rows.map((row) => [row.id, row.label]));
}
