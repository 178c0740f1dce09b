/**
 * What creating, finding and deleting a geofence do (docs/monitoring.md), behind the public API
 * (src/api/routes/geofences.ts). Caps that add up: vertices per fence (./geofences.ts), fences
 * per company and vertices per company, both checked under one lock with the insert.
 */
import type { Config } from '../config.js';
import { createWithinCap, type CompanyCap } from '../db/company-caps.js';
import {
  countGeofences,
  deleteGeofence,
  findGeofence,
  insertGeofenceWithinVertices,
  type GeofenceRecord,
} from '../db/geofences.js';
import type { Pool } from '../db/pool.js';
import { isRecordId } from '../domain/ids.js';
import { AppError, invalidRequest, notFound } from '../errors.js';
import { parseGeofenceArea } from './geofences.js';

/**
 * 400 for an area that is not a valid Polygon or Circle; 409 LIMIT_REACHED past
 * GEOFENCES_PER_COMPANY (details.resource "geofences") or when this fence would take the
 * company's live fences over GEOFENCE_VERTICES_PER_COMPANY vertices ("geofence_vertices").
 */
export async function createGeofence(
  deps: { pool: Pool; config: Pick<Config, 'geofencesPerCompany' | 'geofenceVerticesPerCompany'> },
  companyId: string,
  name: string,
  area: unknown,
): Promise<GeofenceRecord> {
  const parsed = parseGeofenceArea(area);
  if (!parsed.ok) throw invalidRequest(parsed.errors);
  const cap: CompanyCap = { resource: 'geofences', limit: deps.config.geofencesPerCompany, count: countGeofences };
  const maxVertices = deps.config.geofenceVerticesPerCompany;
  return createWithinCap(deps.pool, cap, companyId, async (tx) => {
    const result = await insertGeofenceWithinVertices(tx, { companyId, name, area: parsed.area, maxVertices });
    if (result.inserted) return result.inserted;
    throw new AppError(
      'LIMIT_REACHED',
      `the company's geofences have ${result.usedVertices} vertices and this one ${result.vertices}, over the ` +
        `${maxVertices} one company may have (GEOFENCE_VERTICES_PER_COMPANY); delete or simplify fences first`,
      {
        resource: 'geofence_vertices',
        limit: maxVertices,
        used: result.usedVertices,
        requested: result.vertices,
      },
    );
  });
}

/** The company's geofence, or 404 (another company's is not found either). */
export async function requireGeofence(pool: Pool, companyId: string, id: string): Promise<GeofenceRecord> {
  const geofence = isRecordId(id) ? await findGeofence(pool, companyId, id) : null;
  if (!geofence) throw notFound('geofence');
  return geofence;
}

/** Subscriptions that name the fence in options.geofence_ids simply stop watching it. */
export async function removeGeofence(pool: Pool, companyId: string, id: string): Promise<GeofenceRecord> {
  const deleted = isRecordId(id) ? await deleteGeofence(pool, companyId, id) : null;
  if (!deleted) throw notFound('geofence');
  return deleted;
}
