/**
 * Statements of the geofences API (docs/monitoring.md). A geofence is deleted softly (deleted_at): it stops
 * being watched at once, and a subscription that names it in options.geofence_ids keeps the id
 * but watches the fences that remain.
 */
import type { Geofence, GeofenceArea } from '../domain/geo.js';
import type { Queryable } from './pool.js';

export interface GeofenceRecord extends Geofence {
  createdAt: Date;
}

const columns = `id, name, area, created_at AS "createdAt"`;

/**
 * Inserts the geofence unless the company's live fences would then have more than `maxVertices`
 * vertices (the generated `vertex_count`, migration 0022); answers the fence, or the vertices in
 * use and the new fence's count when it was refused. Run it under the company's geofences lock
 * (src/db/company-caps.ts), so two creations cannot both fit in the same room.
 */
export async function insertGeofenceWithinVertices(
  q: Queryable,
  g: { companyId: string; name: string; area: GeofenceArea; maxVertices: number },
): Promise<{ inserted: GeofenceRecord } | { inserted: null; usedVertices: number; vertices: number }> {
  // Without the insert, the inserted columns come back null.
  const result = await q.query<
    Omit<GeofenceRecord, 'id'> & { id: string | null; usedVertices: number; vertices: number }
  >(
    `WITH used AS (
       SELECT coalesce(sum(vertex_count), 0)::int AS n FROM geofences WHERE company_id = $1 AND deleted_at IS NULL
     ), inserted AS (
       INSERT INTO geofences (company_id, name, area)
       SELECT $1, $2, $3 FROM used WHERE used.n + geofence_vertex_count($3) <= $4
       RETURNING ${columns}
     )
     SELECT used.n AS "usedVertices", geofence_vertex_count($3) AS "vertices", inserted.*
     FROM used LEFT JOIN inserted ON true`,
    [g.companyId, g.name, JSON.stringify(g.area), g.maxVertices],
  );
  const { usedVertices, vertices, ...row } = result.rows[0]!;
  return row.id === null ? { inserted: null, usedVertices, vertices } : { inserted: row as GeofenceRecord };
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
 * Ids of the company's live geofences among `ids`, or of all of them when `ids` is null (a
 * subscription without options.geofence_ids watches every fence of its company), oldest first.
 * Fences never change once created, so this list is also the version of the fences it names.
 */
export async function loadGeofenceIds(
  q: Queryable,
  companyId: string,
  ids: readonly string[] | null,
): Promise<string[]> {
  const result = await q.query<{ id: string }>(
    `SELECT id FROM geofences
     WHERE company_id = $1 AND deleted_at IS NULL AND ($2::uuid[] IS NULL OR id = ANY ($2::uuid[]))
     ORDER BY created_at, id`,
    [companyId, ids],
  );
  return result.rows.map((r) => r.id);
}

/**
 * The company's geofences with these ids, in the order given (deleted since or not: the caller
 * read the ids a moment ago), each area as its stored JSON text: whoever needs the geometry parses
 * it (the CPU pool's threads), not the event loop.
 */
export async function loadGeofenceTexts(
  q: Queryable,
  companyId: string,
  ids: readonly string[],
): Promise<Array<{ id: string; name: string; areaJson: string }>> {
  const result = await q.query<{ id: string; name: string; areaJson: string }>(
    `SELECT g.id, g.name, g.area::text AS "areaJson"
     FROM unnest($2::uuid[]) WITH ORDINALITY AS w(id, n) JOIN geofences g ON g.id = w.id AND g.company_id = $1
     ORDER BY w.n`,
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
