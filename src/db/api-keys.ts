import type { Queryable } from './pool.js';

export interface ApiKeyRecord {
  id: string;
  companyId: string;
  name: string | null;
  keyPrefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

const apiKeyColumns = `id, company_id AS "companyId", name, key_prefix AS "keyPrefix", created_at AS "createdAt",
  last_used_at AS "lastUsedAt", revoked_at AS "revokedAt"`;

export async function insertApiKey(
  q: Queryable,
  companyId: string,
  name: string | null,
  keyPrefix: string,
  keyHash: Buffer,
): Promise<ApiKeyRecord> {
  const result = await q.query<ApiKeyRecord>(
    `INSERT INTO api_keys (company_id, name, key_prefix, key_hash) VALUES ($1, $2, $3, $4) RETURNING ${apiKeyColumns}`,
    [companyId, name, keyPrefix, keyHash],
  );
  return result.rows[0]!;
}

/** The company's keys that are not revoked (the cap of API_KEYS_PER_COMPANY). */
export async function countLiveApiKeys(q: Queryable, companyId: string): Promise<number> {
  const result = await q.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM api_keys WHERE company_id = $1 AND revoked_at IS NULL`,
    [companyId],
  );
  return result.rows[0]!.n;
}

/** The key's id and company when the hash matches a key that is not revoked. */
export async function findActiveApiKey(
  q: Queryable,
  keyHash: Buffer,
): Promise<{ id: string; companyId: string } | null> {
  const result = await q.query<{ id: string; companyId: string }>({
    name: 'find-active-api-key',
    text: `SELECT id, company_id AS "companyId" FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL`,
    values: [keyHash],
  });
  return result.rows[0] ?? null;
}

export async function revokeApiKey(q: Queryable, id: string): Promise<ApiKeyRecord | null> {
  const result = await q.query<ApiKeyRecord>(
    `UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1 RETURNING ${apiKeyColumns}`,
    [id],
  );
  return result.rows[0] ?? null;
}

export async function listApiKeys(q: Queryable, companyId: string): Promise<ApiKeyRecord[]> {
  const result = await q.query<ApiKeyRecord>(
    `SELECT ${apiKeyColumns} FROM api_keys WHERE company_id = $1 ORDER BY created_at DESC, id DESC`,
    [companyId],
  );
  return result.rows;
}

/** Records use; skipped when the stored time is already within a minute, to keep reads write-free. */
export async function touchApiKey(q: Queryable, id: string): Promise<void> {
  await q.query({
    name: 'touch-api-key',
    text: `UPDATE api_keys SET last_used_at = now()
           WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
    values: [id],
  });
}

/** Revokes one of the company's keys (the console); null when the company has no such key. */
export async function revokeCompanyApiKey(q: Queryable, companyId: string, id: string): Promise<ApiKeyRecord | null> {
  const result = await q.query<ApiKeyRecord>(
    `UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1 AND company_id = $2 RETURNING ${apiKeyColumns}`,
    [id, companyId],
  );
  return result.rows[0] ?? null;
}

/** One of the company's keys that is not revoked (the console's revoke confirmation). */
export async function findActiveCompanyApiKey(
  q: Queryable,
  companyId: string,
  id: string,
): Promise<ApiKeyRecord | null> {
  const result = await q.query<ApiKeyRecord>(
    `SELECT ${apiKeyColumns} FROM api_keys WHERE id = $1 AND company_id = $2 AND revoked_at IS NULL`,
    [id, companyId],
  );
  return result.rows[0] ?? null;
}
