/** A company as the operator API shows it (the response schema is src/api/schemas/admin.ts `Company`). */
import type { CompanyRecord } from '../db/companies.js';

export function presentCompany(company: CompanyRecord) {
  return {
    id: company.id,
    name: company.name,
    external_ids: company.externalIds,
    created_at: company.createdAt.toISOString(),
  };
}
