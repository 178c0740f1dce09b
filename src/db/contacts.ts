import type { Queryable } from './pool.js';

export interface ContactInput {
  name: string | null;
  email: string | null;
  phone: string | null;
}

/**
 * The contact id for a customer: the company's contact with the same email (details refreshed),
 * or a new contact when there is no email to match on.
 */
export async function upsertContact(q: Queryable, companyId: string, contact: ContactInput): Promise<string> {
  const result = await q.query<{ id: string }>(
    contact.email === null
      ? `INSERT INTO contacts (company_id, name, email, phone) VALUES ($1, $2, $3, $4) RETURNING id`
      : `INSERT INTO contacts (company_id, name, email, phone) VALUES ($1, $2, $3, $4)
         ON CONFLICT (company_id, lower(email)) WHERE email IS NOT NULL
         DO UPDATE SET name = coalesce(excluded.name, contacts.name),
                       phone = coalesce(excluded.phone, contacts.phone),
                       updated_at = now()
         RETURNING id`,
    [companyId, contact.name, contact.email, contact.phone],
  );
  return result.rows[0]!.id;
}
