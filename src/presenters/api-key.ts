/** An API key as the operator API shows it: never the key, only its prefix (response schema: src/api/schemas/admin.ts `ApiKey`). */
import type { ApiKeyRecord } from '../db/api-keys.js';

export function presentApiKey(key: ApiKeyRecord) {
  return {
    id: key.id,
    company_id: key.companyId,
    name: key.name,
    prefix: key.keyPrefix,
    created_at: key.createdAt.toISOString(),
    last_used_at: key.lastUsedAt?.toISOString() ?? null,
    revoked_at: key.revokedAt?.toISOString() ?? null,
  };
}
