import type { RunItem, RunRecord, RunState, RunStatus, SchedulingState } from '../domain/run.js';
import { jsonb, type Queryable } from './pool.js';

// updated_at uses clock_timestamp() for the same reason as in vehicles.ts.

const runColumns = `r.id, r.company_id AS "companyId", r.vehicle_id AS "vehicleId", r.contact_id AS "contactId",
  r.service_location_id AS "serviceLocationId", r.reference_code AS "referenceCode", r.title, r.description, r.status,
  r.scheduling_state AS "schedulingState", r.preferred_start AS "preferredStart", r.preferred_end AS "preferredEnd",
  r.appointment_start AS "appointmentStart", r.appointment_end AS "appointmentEnd", r.confirmed_at AS "confirmedAt",
  r.appointment_time AS "appointmentTime", r.customer_requested_time AS "customerRequestedTime", r.customer,
  r.items, r.dispatch_proposal AS "dispatchProposal", r.completed_at AS "completedAt", r.created_at AS "createdAt",
  r.updated_at AS "updatedAt",
  CASE WHEN v.id IS NULL THEN NULL ELSE json_build_object(
    'id', v.id, 'licensePlate', v.license_plate, 'make', v.make, 'model', v.model, 'vin', v.vin, 'year', v.year)
  END AS vehicle`;

const runFrom = `runs r LEFT JOIN vehicles v ON v.id = r.vehicle_id`;

export interface RunFilter {
  status: RunStatus | null;
  schedulingState: SchedulingState | null;
  updatedSince: Date | null;
}

const runFilterSql = `r.company_id = $1
  AND ($2::text IS NULL OR r.status = $2)
  AND ($3::text IS NULL OR r.scheduling_state = $3)
  AND ($4::timestamptz IS NULL OR r.updated_at >= $4)`;

export async function listRuns(
  q: Queryable,
  companyId: string,
  f: RunFilter,
  limit: number,
  offset: number,
): Promise<RunRecord[]> {
  const result = await q.query<RunRecord>({
    name: 'list-runs',
    text: `SELECT ${runColumns} FROM ${runFrom} WHERE ${runFilterSql}
           ORDER BY r.updated_at DESC, r.id DESC LIMIT $5 OFFSET $6`,
    values: [companyId, f.status, f.schedulingState, f.updatedSince, limit, offset],
  });
  return result.rows;
}

export async function countRuns(q: Queryable, companyId: string, f: RunFilter): Promise<number> {
  const result = await q.query<{ total: number }>({
    name: 'count-runs',
    text: `SELECT count(*) AS total FROM runs r WHERE ${runFilterSql}`,
    values: [companyId, f.status, f.schedulingState, f.updatedSince],
  });
  return result.rows[0]!.total;
}

export async function findRun(q: Queryable, companyId: string, id: string): Promise<RunRecord | null> {
  const result = await q.query<RunRecord>({
    name: 'find-run',
    text: `SELECT ${runColumns} FROM ${runFrom} WHERE r.id = $1 AND r.company_id = $2`,
    values: [id, companyId],
  });
  return result.rows[0] ?? null;
}

/** Locks the run row for the rest of the transaction. */
export async function lockRun(q: Queryable, companyId: string, id: string): Promise<RunRecord | null> {
  const result = await q.query<RunRecord>(
    `SELECT ${runColumns} FROM ${runFrom} WHERE r.id = $1 AND r.company_id = $2 FOR NO KEY UPDATE OF r`,
    [id, companyId],
  );
  return result.rows[0] ?? null;
}

/** The vehicle's run that is still open or in progress, locked; the fold rule adds to it. */
export async function lockOpenRunOfVehicle(
  q: Queryable,
  vehicleId: string,
): Promise<{ id: string; items: RunItem[] } | null> {
  const result = await q.query<{ id: string; items: RunItem[] }>(
    `SELECT id, items FROM runs WHERE vehicle_id = $1 AND status IN ('open', 'in_progress')
     ORDER BY created_at DESC LIMIT 1 FOR NO KEY UPDATE`,
    [vehicleId],
  );
  return result.rows[0] ?? null;
}

export type NewRun = Pick<
  RunRecord,
  | 'companyId'
  | 'vehicleId'
  | 'contactId'
  | 'serviceLocationId'
  | 'referenceCode'
  | 'title'
  | 'description'
  | 'preferredStart'
  | 'preferredEnd'
  | 'customerRequestedTime'
  | 'customer'
  | 'items'
>;

/** Inserts a run; null when the reference code is already taken in the company (caller retries). */
export async function insertRun(q: Queryable, run: NewRun): Promise<string | null> {
  const result = await q.query<{ id: string }>(
    `INSERT INTO runs (company_id, vehicle_id, contact_id, service_location_id, reference_code, title, description,
                       preferred_start, preferred_end, customer_requested_time, customer, items)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
     ON CONFLICT (company_id, reference_code) DO NOTHING
     RETURNING id`,
    [
      run.companyId,
      run.vehicleId,
      run.contactId,
      run.serviceLocationId,
      run.referenceCode,
      run.title,
      run.description,
      run.preferredStart,
      run.preferredEnd,
      jsonb(run.customerRequestedTime),
      jsonb(run.customer),
      jsonb(run.items),
    ],
  );
  return result.rows[0]?.id ?? null;
}

export async function setRunItems(q: Queryable, id: string, items: RunItem[]): Promise<void> {
  await q.query(`UPDATE runs SET items = $2, updated_at = clock_timestamp() WHERE id = $1`, [id, jsonb(items)]);
}

export async function updateRunState(q: Queryable, id: string, s: RunState): Promise<void> {
  await q.query(
    `UPDATE runs SET status = $2, scheduling_state = $3, appointment_start = $4, appointment_end = $5,
                     confirmed_at = $6, appointment_time = $7, dispatch_proposal = $8, completed_at = $9,
                     updated_at = clock_timestamp()
     WHERE id = $1`,
    [
      id,
      s.status,
      s.schedulingState,
      s.appointmentStart,
      s.appointmentEnd,
      s.confirmedAt,
      jsonb(s.appointmentTime),
      jsonb(s.dispatchProposal),
      s.completedAt,
    ],
  );
}

/** The owning company of a run, for operator routes that address a run by id alone. */
export async function findRunCompanyId(q: Queryable, id: string): Promise<string | null> {
  const result = await q.query<{ companyId: string }>(`SELECT company_id AS "companyId" FROM runs WHERE id = $1`, [id]);
  return result.rows[0]?.companyId ?? null;
}

/** Whether the vehicle has a run other than `runId` that is open or in progress. */
export async function hasOtherOpenRun(q: Queryable, vehicleId: string, runId: string): Promise<boolean> {
  const result = await q.query(
    `SELECT 1 FROM runs WHERE vehicle_id = $1 AND id <> $2 AND status IN ('open', 'in_progress') LIMIT 1`,
    [vehicleId, runId],
  );
  return (result.rowCount ?? 0) > 0;
}

/** Stamps a completed run with the vehicle's odometer: the meter of that service for maintenance. */
export async function stampCompletedOdometer(q: Queryable, runId: string): Promise<void> {
  await q.query(
    `UPDATE runs r SET completed_odometer_km = (v.signals -> 'odometer' ->> 'km')::float8
     FROM vehicles v WHERE r.id = $1 AND v.id = r.vehicle_id`,
    [runId],
  );
}
