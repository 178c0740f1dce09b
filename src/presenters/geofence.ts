/** A geofence as the public API shows it. */
import type { GeofenceRecord } from '../db/geofences.js';

export function presentGeofence(g: GeofenceRecord) {
  return { id: g.id, name: g.name, area: g.area, created_at: g.createdAt.toISOString() };
}
