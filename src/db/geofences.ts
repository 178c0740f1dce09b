/**
 * Statements of the geofences API (DESIGN §11). A geofence is deleted softly (deleted_at): it stops
 * being watched at once, and a subscription that names it in options.geofence_ids keeps the id
 * but watches the fences that remain.
 */
import type { Geofence, GeofenceArea } from '../monitoring/types.js';
import type { Queryable } from './pool.js';

export interface GeofenceRecord extends Geofence {
  createdAt: Date;
}

const columns = `id, name, area, created_at AS "createdAt"`;

export async function insertGeofence(
  q: Queryable,
  g: { companyId: string; name: string; area: GeofenceArea },
): Promise<GeofenceRecord> {
  const result = await q.query<GeofenceRecord>(
    `INSERT INTO geofences (company_id, name, area) VALUES ($1, $2, $3) RETURNING ${columns}`,
    [g.companyId, g.name, JSON.stringify(g.area)],
  );
  return result.rows[0]!;
}

/** The company's live geofences, newest first. */
export async function listGeofences(
  q: Queryable,
  companyId: string,
  limit: number,
  offset: number,
): Promise<GeofenceRecord[]> {
  const result = await q.query<GeofenceRecord>(
    `SELECT ${columns} FROM geofences WHERE company_id = $1 AND deleted_at IS NULL
     ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`,
    [companyId, limit, offset],
  );
  return result.rows;
}

/** Live geofences of a company: the list's total and the cap's count. */
export async function countGeofences(q: Queryable, companyId: string): Promise<number> {
  const result = await q.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM geofences WHERE company_id = $1 AND deleted_at IS NULL`,
    [companyId],
  );
  return result.rows[0]!.n;
}

export async function findGeofence(q: Queryable, companyId: string, id: string): Promise<GeofenceRecord | null> {
  const result = await q.query<GeofenceRecord>(
    `SELECT ${columns} FROM geofences WHERE id = $1 AND company_id = $2 AND deleted_at IS NULL`,
    [id, companyId],
  );
  return result.rows[0] ?? null;
}

export async function deleteGeofence(q: Queryable, companyId: string, id: string): Promise<GeofenceRecord | null> {
  const result = await q.query<GeofenceRecord>(
    `UPDATE geofences SET deleted_at = clock_timestamp() WHERE id = $1 AND company_id = $2 AND deleted_at IS NULL
     RETURNING ${columns}`,
    [id, companyId],
  );
  return result.rows[0] ?? null;
}

/**
 * The company's live geofences among `ids`, or all of them when `ids` is null (a subscription
 * without options.geofence_ids watches every fence of its company).
 */
export async function loadGeofences(
  q: Queryable,
  companyId: string,
  ids: readonly string[] | null,
): Promise<GeofenceRecord[]> {
  const result = await q.query<GeofenceRecord>(
    `SELECT ${columns} FROM geofences
     WHERE company_id = $1 AND deleted_at IS NULL AND ($2::uuid[] IS NULL OR id = ANY ($2::uuid[]))
     ORDER BY created_at, id`,
    [companyId, ids],
  );
  return result.rows;
}

/** The live geofences of each of these companies, oldest first (the detection stage's read). */
export async function loadCompanyGeofences(
  q: Queryable,
  companyIds: readonly string[],
): Promise<Map<string, GeofenceRecord[]>> {
  const result = await q.query<GeofenceRecord & { companyId: string }>({
    name: 'load-company-geofences',
    text: `SELECT company_id AS "companyId", ${columns} FROM geofences
           WHERE company_id = ANY ($1::uuid[]) AND deleted_at IS NULL ORDER BY created_at, id`,
    values: [companyIds],
  });
  const byCompany = new Map<string, GeofenceRecord[]>();
  for (const { companyId, ...fence } of result.rows) {
    const list = byCompany.get(companyId) ?? [];
    list.push(fence);
    byCompany.set(companyId, list);
  }
  return byCompany;
}
