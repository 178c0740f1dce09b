/**
 * Vehicle ownership spans (migration 0015): which company held a vehicle when. The history
 * report labels them Owner 1, 2, … and never names them.
 */
import type { Queryable } from './pool.js';

export interface OwnershipSpan {
  vehicleId: string;
  companyId: string;
  startedAt: Date;
  /** null while the company holds the vehicle. */
  endedAt: Date | null;
}

/**
 * SQL: when the current owner got the vehicle `vehicleId` (an SQL expression) from a previous
 * owner: the end of the latest closed span, or null for a vehicle that never changed hands (its
 * first owner's readings, from before it was added too, are its own). The read functions that
 * keep the ownership boundary (docs/ownership.md) read nothing taken before it. One
 * index-only probe of the closed spans (migration 0023).
 */
export function ownedSinceSql(vehicleId: string): string {
  return `(SELECT max(ended_at) FROM vehicle_ownerships WHERE vehicle_id = ${vehicleId} AND ended_at IS NOT NULL)`;
}

/** The vehicle's current span (ended_at null), locked for the transfer that ends it. */
export async function lockCurrentOwnership(q: Queryable, vehicleId: string): Promise<OwnershipSpan | null> {
  const result = await q.query<OwnershipSpan>(
    `SELECT vehicle_id AS "vehicleId", company_id AS "companyId", started_at AS "startedAt", ended_at AS "endedAt"
     FROM vehicle_ownerships WHERE vehicle_id = $1 AND ended_at IS NULL FOR UPDATE`,
    [vehicleId],
  );
  return result.rows[0] ?? null;
}

export async function endOwnership(q: Queryable, vehicleId: string, at: Date): Promise<void> {
  await q.query(`UPDATE vehicle_ownerships SET ended_at = $2 WHERE vehicle_id = $1 AND ended_at IS NULL`, [
    vehicleId,
    at,
  ]);
}

export async function startOwnership(q: Queryable, vehicleId: string, companyId: string, at: Date): Promise<void> {
  await q.query(`INSERT INTO vehicle_ownerships (vehicle_id, company_id, started_at) VALUES ($1, $2, $3)`, [
    vehicleId,
    companyId,
    at,
  ]);
}

/**
 * Moves the vehicle row to the new company. What belonged to the old company is let go: its
 * provider connection (the new owner attaches its own; until then the vehicle is tracked by hand)
 * and its home service location.
 */
export async function moveVehicleToCompany(q: Queryable, vehicleId: string, companyId: string): Promise<void> {
  await q.query(
    `UPDATE vehicles SET company_id = $2, provider_connection_id = NULL, provider_vehicle_id = NULL,
       telematics_provider = NULL, home_location_id = NULL, link_broken = NULL, updated_at = clock_timestamp()
     WHERE id = $1`,
    [vehicleId, companyId],
  );
}

/** Ends the old owner's live monitoring subscriptions on the vehicle (they stay for metering). */
export async function endVehicleSubscriptions(q: Queryable, vehicleId: string, companyId: string): Promise<number> {
  const result = await q.query(
    `UPDATE monitoring_subscriptions SET deleted_at = clock_timestamp()
     WHERE vehicle_id = $1 AND company_id = $2 AND deleted_at IS NULL`,
    [vehicleId, companyId],
  );
  return result.rowCount ?? 0;
}

/** Every ownership span of the vehicles, oldest first (the report numbers owners over all of them). */
export async function listOwnerships(q: Queryable, vehicleIds: readonly string[]): Promise<OwnershipSpan[]> {
  const result = await q.query<OwnershipSpan>({
    name: 'list-ownerships',
    text: `SELECT vehicle_id AS "vehicleId", company_id AS "companyId", started_at AS "startedAt", ended_at AS "endedAt"
           FROM vehicle_ownerships WHERE vehicle_id = ANY($1::uuid[]) ORDER BY started_at, id`,
    values: [vehicleIds],
  });
  return result.rows;
}
