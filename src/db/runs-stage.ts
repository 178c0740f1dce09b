/** Statements of the runs stage: health events to consume, the dispatch roster and assignee load. */
import type { VehicleAlert } from '../domain/vehicle.js';
import type { RosterMember } from '../domain/run.js';
import type { Queryable } from './pool.js';

export interface PendingHealthEvent {
  id: number;
  companyId: string;
  vehicleId: string;
  kind: string;
  payload: Record<string, unknown>;
  /** The company's service_requests_from_health setting (on unless set to false). */
  requestsEnabled: boolean;
  currentAlerts: VehicleAlert[];
}

/** Locks the oldest unconsumed health events (SKIP LOCKED: parallel consumers split the work). */
export async function lockPendingHealthEvents(q: Queryable, limit: number): Promise<PendingHealthEvent[]> {
  const result = await q.query<PendingHealthEvent>(
    `SELECT h.id, h.company_id AS "companyId", h.vehicle_id AS "vehicleId", h.kind, h.payload,
            coalesce((c.settings ->> 'service_requests_from_health')::boolean, true) AS "requestsEnabled",
            coalesce(v.health -> 'alerts', '[]'::jsonb) AS "currentAlerts"
     FROM health_events h JOIN companies c ON c.id = h.company_id JOIN vehicles v ON v.id = h.vehicle_id
     WHERE h.consumed_at IS NULL ORDER BY h.id LIMIT $1
     FOR UPDATE OF h SKIP LOCKED`,
    [limit],
  );
  return result.rows;
}

export async function markHealthEventsConsumed(q: Queryable, ids: readonly number[]): Promise<void> {
  if (ids.length === 0) return;
  await q.query(`UPDATE health_events SET consumed_at = clock_timestamp() WHERE id = ANY($1::bigint[])`, [ids]);
}

/**
 * Records that the dispatch assistant looks at the run now, whatever it proposes. False when it
 * already had: a repeated request (a retry, the sweep) then does nothing.
 */
export async function claimDispatchCheck(q: Queryable, runId: string): Promise<boolean> {
  const result = await q.query(
    `UPDATE runs SET dispatch_checked_at = clock_timestamp() WHERE id = $1 AND dispatch_checked_at IS NULL`,
    [runId],
  );
  return result.rowCount === 1;
}

/** Runs created before `before` that the dispatch assistant has not looked at (their request was lost). */
export async function listRunsAwaitingDispatch(
  q: Queryable,
  before: Date,
  limit: number,
): Promise<Array<{ companyId: string; runId: string }>> {
  const result = await q.query<{ companyId: string; runId: string }>(
    `SELECT company_id AS "companyId", id AS "runId" FROM runs
     WHERE dispatch_checked_at IS NULL AND created_at < $1 ORDER BY created_at LIMIT $2`,
    [before, limit],
  );
  return result.rows;
}

const rosterColumns = `id, type, name, skills, latitude, longitude, capacity, active`;

export async function listRoster(q: Queryable, companyId: string): Promise<RosterMember[]> {
  const result = await q.query<RosterMember>(
    `SELECT ${rosterColumns} FROM dispatch_roster WHERE company_id = $1 ORDER BY name, id`,
    [companyId],
  );
  return result.rows;
}

export async function insertRosterMember(
  q: Queryable,
  companyId: string,
  m: Omit<RosterMember, 'id' | 'active'>,
): Promise<RosterMember> {
  const result = await q.query<RosterMember>(
    `INSERT INTO dispatch_roster (company_id, type, name, skills, latitude, longitude, capacity) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${rosterColumns}`,
    [companyId, m.type, m.name, m.skills, m.latitude, m.longitude, m.capacity],
  );
  return result.rows[0]!;
}

export async function deactivateRosterMember(q: Queryable, id: string): Promise<RosterMember | null> {
  const result = await q.query<RosterMember>(
    `UPDATE dispatch_roster SET active = false WHERE id = $1 RETURNING ${rosterColumns}`,
    [id],
  );
  return result.rows[0] ?? null;
}

export async function findRosterMemberCompanyId(q: Queryable, id: string): Promise<string | null> {
  const result = await q.query<{ companyId: string }>(
    `SELECT company_id AS "companyId" FROM dispatch_roster WHERE id = $1`,
    [id],
  );
  return result.rows[0]?.companyId ?? null;
}

/** Open runs per proposed assignee of the company: the load the assistant balances. */
export async function countOpenRunsByAssignee(q: Queryable, companyId: string): Promise<Record<string, number>> {
  const result = await q.query<{ assignee: string; n: number }>(
    `SELECT dispatch_proposal -> 'assignee' ->> 'id' AS assignee, count(*) AS n
     FROM runs WHERE company_id = $1 AND status IN ('open', 'in_progress') AND dispatch_proposal IS NOT NULL
     GROUP BY 1`,
    [companyId],
  );
  return Object.fromEntries(result.rows.map((r) => [r.assignee, r.n]));
}
