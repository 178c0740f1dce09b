/**
 * Creating and revoking an API key, shared by the operator API (src/api/routes/admin/companies.ts)
 * and the developer console, so both take the same code path and the same cap on live keys per
 * company: each live key has its own rate limit, so the cap bounds what one company can draw.
 */
import type { Config } from '../config.js';
import { recordAudit } from '../audit/record.js';
import { countLiveApiKeys, insertApiKey, revokeCompanyApiKey, type ApiKeyRecord } from '../db/api-keys.js';
import type { AuditActor } from '../db/audit-events.js';
import { withTransaction, type Pool, type Queryable } from '../db/pool.js';
import type { RedisConnection } from '../queue/connection.js';
import { generateApiKey } from '../security/api-keys.js';
import { broadcastRevocation, type ApiKeyCache } from './api-key-cache.js';
import { createWithinCap } from '../db/company-caps.js';

export interface CreatedApiKey {
  record: ApiKeyRecord;
  /** The key itself, shown once; only its hash is stored. */
  key: string;
}

/**
 * Creates a key within API_KEYS_PER_COMPANY (409 LIMIT_REACHED past it, counted in a transaction
 * locked per company, so concurrent creations cannot both take the last place). `alongside` runs
 * in the same transaction: what it writes commits or rolls back with the key.
 */
export async function createApiKey(
  deps: { pool: Pool; config: Pick<Config, 'apiKeysPerCompany'> },
  companyId: string,
  name: string | null,
  alongside?: (tx: Queryable, created: CreatedApiKey) => Promise<void>,
): Promise<CreatedApiKey> {
  const generated = generateApiKey();
  const cap = {
    resource: 'api_keys',
    counted: 'live API keys',
    limit: deps.config.apiKeysPerCompany,
    count: countLiveApiKeys,
    makeRoom: 'revoke one first',
  };
  return createWithinCap(deps.pool, cap, companyId, async (tx) => {
    const created = {
      record: await insertApiKey(tx, companyId, name, generated.prefix, generated.hash),
      key: generated.key,
    };
    await alongside?.(tx, created);
    return created;
  });
}

/**
 * Tells the API processes that a key revoked in Postgres is gone: this one forgets it now, the
 * others when the broadcast reaches them. Rejects when the broadcast fails (the others then drop
 * the key within their cache's 30 s).
 */
export async function announceRevocation(
  deps: { redis: RedisConnection; keyCache: ApiKeyCache },
  keyId: string,
): Promise<void> {
  deps.keyCache.evict(keyId);
  await broadcastRevocation(deps.redis, deps.keyCache.channel, keyId);
}

/**
 * Revokes one of the company's keys from the console, with its audit row in the same
 * transaction; null when the company has no such key. The caller announces the revocation.
 */
export function revokeCompanyKey(
  pool: Pool,
  companyId: string,
  actor: AuditActor,
  id: string,
): Promise<ApiKeyRecord | null> {
  return withTransaction(pool, async (tx) => {
    const key = await revokeCompanyApiKey(tx, companyId, id);
    if (key) await recordAudit(tx, companyId, actor, 'api_key.revoked', { type: 'api_key', id: key.id });
    return key;
  });
}
