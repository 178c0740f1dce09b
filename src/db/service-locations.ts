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

/** The columns of a ServiceLocationRecord, of the table aliased `alias` when given. */
export function serviceLocationColumns(alias = ''): string {
  const c = alias ? `${alias}.` : '';
  return `${c}id, ${c}company_id AS "companyId", ${c}name, ${c}street_1 AS "street1", ${c}street_2 AS "street2", ${c}city, ${c}state,
    ${c}postal_code AS "postalCode", ${c}country, ${c}display_address AS "displayAddress", ${c}latitude, ${c}longitude`;
}

export async function insertServiceLocation(q: Queryable, companyId: string, l: ServiceLocationInput): Promise<ServiceLocationRecord> {
  const result = await q.query<ServiceLocationRecord>(
    `INSERT INTO service_locations (company_id, name, street_1, street_2, city, state, postal_code, country,
                                    display_address, latitude, longitude)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING ${serviceLocationColumns()}`,
    [companyId, l.name, l.street1, l.street2, l.city, l.state, l.postalCode, l.country, l.displayAddress, l.latitude, l.longitude],
  );
  return result.rows[0]!;
}
