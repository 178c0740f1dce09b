import type { Queryable } from './pool.js';

export interface ServiceEntryRecord {
  id: string;
  vehicleId: string;
  type: string;
  performedAt: Date;
  odometerKm: number | null;
  notes: string | null;
  createdAt: Date;
}

const entryColumns = `id, vehicle_id AS "vehicleId", type, performed_at AS "performedAt", odometer_km AS "odometerKm", notes, created_at AS "createdAt"`;

export async function insertServiceEntry(
  q: Queryable,
  entry: {
    companyId: string;
    vehicleId: string;
    type: string;
    performedAt: Date;
    odometerKm: number | null;
    notes: string | null;
  },
): Promise<ServiceEntryRecord> {
  const result = await q.query<ServiceEntryRecord>(
    `INSERT INTO service_entries (company_id, vehicle_id, type, performed_at, odometer_km, notes)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${entryColumns}`,
    [entry.companyId, entry.vehicleId, entry.type, entry.performedAt, entry.odometerKm, entry.notes],
  );
  return result.rows[0]!;
}

export async function listServiceEntries(q: Queryable, vehicleId: string): Promise<ServiceEntryRecord[]> {
  const result = await q.query<ServiceEntryRecord>(
    `SELECT ${entryColumns} FROM service_entries WHERE vehicle_id = $1 ORDER BY performed_at DESC, id DESC`,
    [vehicleId],
  );
  return result.rows;
}
