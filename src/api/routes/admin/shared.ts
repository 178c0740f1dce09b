import Type from 'typebox';
import type { Pool } from '../../../db/pool.js';
import { findCompany, type CompanyRecord } from '../../../db/companies.js';
import { notFound } from '../../../errors.js';
import { ErrorEnvelope, PathId } from '../../../web/schemas.js';
import { isRecordId } from '../../../domain/ids.js';

export const adminSecurity = [{ adminToken: [] }];
export const adminErrors = { 400: ErrorEnvelope, 401: ErrorEnvelope, 404: ErrorEnvelope, 500: ErrorEnvelope } as const;
export const CompanyParams = Type.Object({ company_id: PathId });

export async function requireCompany(pool: Pool, companyId: string): Promise<CompanyRecord> {
  const company = isRecordId(companyId) ? await findCompany(pool, companyId) : null;
  if (!company) throw notFound('company');
  return company;
}

/** The owning company of a record addressed by id alone, or 404. */
export async function requireOwner(
  pool: Pool,
  id: string,
  what: string,
  lookup: (pool: Pool, id: string) => Promise<string | null>,
): Promise<string> {
  const companyId = isRecordId(id) ? await lookup(pool, id) : null;
  if (!companyId) throw notFound(what);
  return companyId;
}
