import type { Queryable } from './pool.js';

export interface ProviderConnectionRecord {
  id: string;
  companyId: string;
  provider: string;
  name: string | null;
  configCiphertext: Buffer;
  pullCursor: string | null;
  pullIntervalSeconds: number;
  nextPullAt: Date | null;
  lastPullAt: Date | null;
  lastPullError: string | null;
  active: boolean;
  createdAt: Date;
}

const connectionColumns = `id, company_id AS "companyId", provider, name, config_ciphertext AS "configCiphertext",
  pull_cursor AS "pullCursor", pull_interval_seconds AS "pullIntervalSeconds",
  next_pull_at AS "nextPullAt", last_pull_at AS "lastPullAt", last_pull_error AS "lastPullError", active,
  created_at AS "createdAt"`;

export interface NewProviderConnection {
  companyId: string;
  provider: string;
  name: string | null;
  configCiphertext: Buffer;
  pullIntervalSeconds: number;
}

export async function insertProviderConnection(
  q: Queryable,
  c: NewProviderConnection,
): Promise<ProviderConnectionRecord> {
  const result = await q.query<ProviderConnectionRecord>(
    `INSERT INTO provider_connections (company_id, provider, name, config_ciphertext, pull_interval_seconds)
     VALUES ($1, $2, $3, $4, $5) RETURNING ${connectionColumns}`,
    [c.companyId, c.provider, c.name, c.configCiphertext, c.pullIntervalSeconds],
  );
  return result.rows[0]!;
}

export async function findProviderConnection(q: Queryable, id: string): Promise<ProviderConnectionRecord | null> {
  const result = await q.query<ProviderConnectionRecord>({
    name: 'find-provider-connection',
    text: `SELECT ${connectionColumns} FROM provider_connections WHERE id = $1`,
    values: [id],
  });
  return result.rows[0] ?? null;
}

export async function listProviderConnections(q: Queryable, companyId: string): Promise<ProviderConnectionRecord[]> {
  const result = await q.query<ProviderConnectionRecord>(
    `SELECT ${connectionColumns} FROM provider_connections WHERE company_id = $1 ORDER BY created_at DESC, id DESC`,
    [companyId],
  );
  return result.rows;
}

/** Active connections of the given providers (those whose feeds are pulled). */
export async function listActiveConnections(
  q: Queryable,
  providers: readonly string[],
): Promise<ProviderConnectionRecord[]> {
  const result = await q.query<ProviderConnectionRecord>(
    `SELECT ${connectionColumns} FROM provider_connections WHERE active AND provider = ANY($1) ORDER BY id`,
    [providers],
  );
  return result.rows;
}

export async function setConnectionActive(
  q: Queryable,
  id: string,
  active: boolean,
): Promise<ProviderConnectionRecord | null> {
  const result = await q.query<ProviderConnectionRecord>(
    `UPDATE provider_connections SET active = $2 WHERE id = $1 RETURNING ${connectionColumns}`,
    [id, active],
  );
  return result.rows[0] ?? null;
}

/**
 * Claims the connection's feed for one page when it is due: next_pull_at becomes `leaseUntil`,
 * in one statement, so two pulls of one feed never overlap and no row lock is held while the
 * provider answers. Null when inactive, backing off, or claimed by another pull.
 */
export async function claimFeedPull(
  q: Queryable,
  id: string,
  now: Date,
  leaseUntil: Date,
): Promise<ProviderConnectionRecord | null> {
  const result = await q.query<ProviderConnectionRecord>(
    `UPDATE provider_connections SET next_pull_at = $3
     WHERE id = $1 AND active AND (next_pull_at IS NULL OR next_pull_at <= $2)
     RETURNING ${connectionColumns}`,
    [id, now, leaseUntil],
  );
  return result.rows[0] ?? null;
}

/** Gives a claim back without a page (storing it failed): the feed is due again at once. */
export async function releaseFeedPull(q: Queryable, id: string, leaseUntil: Date): Promise<void> {
  await q.query(`UPDATE provider_connections SET next_pull_at = NULL WHERE id = $1 AND next_pull_at = $2`, [
    id,
    leaseUntil,
  ]);
}

/** Records a pull: the new cursor (only with its page committed in the same transaction), errors, back-off. */
export async function recordPull(
  q: Queryable,
  id: string,
  pull: { cursor: string | null; at: Date; error: string | null; nextPullAt: Date | null },
): Promise<void> {
  await q.query(
    `UPDATE provider_connections SET pull_cursor = $2, last_pull_at = $3, last_pull_error = $4, next_pull_at = $5 WHERE id = $1`,
    [id, pull.cursor, pull.at, pull.error, pull.nextPullAt],
  );
}
