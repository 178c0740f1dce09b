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

export async function insertServiceLocation(
  q: Queryable,
  companyId: string,
  l: ServiceLocationInput,
): Promise<ServiceLocationRecord> {
  const result = await q.query<ServiceLocationRecord>(
    `INSERT INTO service_locations (company_id, name, street_1, street_2, city, state, postal_code, country,
                                    display_address, latitude, longitude)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING ${serviceLocationColumns()}`,
    [
      companyId,
      l.name,
      l.street1,
      l.street2,
      l.city,
      l.state,
      l.postalCode,
      l.country,
      l.displayAddress,
      l.latitude,
      l.longitude,
    ],
  );
  return result.rows[0]!;
}

/**
 * The candidate service locations of a run, in the spec's order: stamped on the run, the
 * vehicle's home, and where the vehicle was last serviced (its latest completed run's location).
 */
export async function findRunLocations(
  q: Queryable,
  runId: string,
): Promise<Array<{ source: 'run' | 'vehicle_home' | 'learned'; location: ServiceLocationRecord }>> {
  const l = serviceLocationColumns('l');
  const result = await q.query<ServiceLocationRecord & { source: 'run' | 'vehicle_home' | 'learned' }>(
    `SELECT 'run' AS source, ${l} FROM runs r JOIN service_locations l ON l.id = r.service_location_id WHERE r.id = $1
     UNION ALL
     SELECT 'vehicle_home', ${l} FROM runs r JOIN vehicles v ON v.id = r.vehicle_id
       JOIN service_locations l ON l.id = v.home_location_id WHERE r.id = $1
     UNION ALL
     (SELECT 'learned', ${l} FROM runs r
        JOIN runs p ON p.vehicle_id = r.vehicle_id AND p.id <> r.id AND p.status = 'completed'
        JOIN service_locations l ON l.id = p.service_location_id
      WHERE r.id = $1 ORDER BY p.completed_at DESC LIMIT 1)`,
    [runId],
  );
  return result.rows.map(({ source, ...location }) => ({ source, location }));
}
