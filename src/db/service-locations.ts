import type { Queryable } from './pool.js';

export interface ServiceLocationInput {
  name: string | null;
  street1: string | null;
  street2: string | null;
  city: string | null;
  state: string | null;
  postalCode: string | null;
  country: string | null;
  displayAddress: string | null;
  latitude: number | null;
  longitude: number | null;
}

export interface ServiceLocationRecord extends ServiceLocationInput {
  id: string;
  companyId: string;
}

const locationColumns = `id, company_id AS "companyId", name, street_1 AS "street1", street_2 AS "street2", city, state,
  postal_code AS "postalCode", country, display_address AS "displayAddress", latitude, longitude`;

export async function insertServiceLocation(q: Queryable, companyId: string, l: ServiceLocationInput): Promise<ServiceLocationRecord> {
  const result = await q.query<ServiceLocationRecord>(
    `INSERT INTO service_locations (company_id, name, street_1, street_2, city, state, postal_code, country,
                                    display_address, latitude, longitude)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING ${locationColumns}`,
    [companyId, l.name, l.street1, l.street2, l.city, l.state, l.postalCode, l.country, l.displayAddress, l.latitude, l.longitude],
  );
  return result.rows[0]!;
}

export async function findServiceLocation(q: Queryable, companyId: string, id: string): Promise<ServiceLocationRecord | null> {
  const result = await q.query<ServiceLocationRecord>(
    `SELECT ${locationColumns} FROM service_locations WHERE id = $1 AND company_id = $2`,
    [id, companyId],
  );
  return result.rows[0] ?? null;
}
