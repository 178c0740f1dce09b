import { jsonb, type Queryable } from './pool.js';

export interface CompanyRecord {
  id: string;
  name: string;
  externalIds: Record<string, string>;
  createdAt: Date;
}

const companyColumns = `id, name, external_ids AS "externalIds", created_at AS "createdAt"`;

export async function insertCompany(
  q: Queryable,
  name: string,
  externalIds: Record<string, string>,
): Promise<CompanyRecord> {
  const result = await q.query<CompanyRecord>(
    `INSERT INTO companies (name, external_ids) VALUES ($1, $2) RETURNING ${companyColumns}`,
    [name, jsonb(externalIds)],
  );
  return result.rows[0]!;
}

export async function findCompany(q: Queryable, id: string): Promise<CompanyRecord | null> {
  const result = await q.query<CompanyRecord>(`SELECT ${companyColumns} FROM companies WHERE id = $1`, [id]);
  return result.rows[0] ?? null;
}

export async function listCompanies(q: Queryable, limit: number, offset: number): Promise<CompanyRecord[]> {
  const result = await q.query<CompanyRecord>(
    `SELECT ${companyColumns} FROM companies ORDER BY created_at DESC, id DESC LIMIT $1 OFFSET $2`,
    [limit, offset],
  );
  return result.rows;
}

/** Replaces the company's health overrides; returns null for an unknown company. */
export async function setCompanyHealthConfig(q: Queryable, id: string, config: unknown): Promise<unknown | null> {
  const result = await q.query<{ healthConfig: unknown }>(
    `UPDATE companies SET health_config = $2, updated_at = now() WHERE id = $1 RETURNING health_config AS "healthConfig"`,
    [id, jsonb(config)],
  );
  return result.rows[0]?.healthConfig ?? null;
}

export async function findCompanyHealthConfig(q: Queryable, id: string): Promise<unknown | null> {
  const result = await q.query<{ healthConfig: unknown }>(
    `SELECT health_config AS "healthConfig" FROM companies WHERE id = $1`,
    [id],
  );
  return result.rows[0]?.healthConfig ?? null;
}

export async function updateCompany(
  q: Queryable,
  id: string,
  patch: { name?: string; externalIds?: Record<string, string>; settings?: Record<string, unknown> },
): Promise<(CompanyRecord & { settings: Record<string, unknown> }) | null> {
  const result = await q.query<CompanyRecord & { settings: Record<string, unknown> }>(
    `UPDATE companies SET name = coalesce($2, name), external_ids = coalesce($3, external_ids),
            settings = settings || coalesce($4, '{}'::jsonb), updated_at = now()
     WHERE id = $1 RETURNING ${companyColumns}, settings`,
    [id, patch.name ?? null, jsonb(patch.externalIds), jsonb(patch.settings)],
  );
  return result.rows[0] ?? null;
}
