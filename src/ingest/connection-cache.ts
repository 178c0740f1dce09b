/**
 * Provider connections as the push endpoint needs them, with the config decrypted, cached in
 * process for a few seconds: a push stream would otherwise pay a Postgres round trip and a
 * decryption per request. A changed secret or a deactivation takes effect within `ttlMs`.
 */
import type { ProviderConfig } from '../../providers/types.js';
import { findProviderConnection } from '../db/provider-connections.js';
import type { Pool } from '../db/pool.js';
import { decryptJson } from '../security/secrets.js';

export interface IngestConnection {
  id: string;
  companyId: string;
  provider: string;
  active: boolean;
  config: ProviderConfig;
}

export class ConnectionCache {
  private readonly entries = new Map<string, { connection: IngestConnection | null; expiresAt: number }>();

  constructor(
    private readonly pool: Pool,
    private readonly secretsKey: Buffer,
    private readonly ttlMs = 10_000,
    private readonly maxEntries = 10_000,
  ) {}

  async get(id: string, now = Date.now()): Promise<IngestConnection | null> {
    const cached = this.entries.get(id);
    if (cached && cached.expiresAt > now) return cached.connection;
    const record = await findProviderConnection(this.pool, id);
    const connection = record
      ? {
          id: record.id,
          companyId: record.companyId,
          provider: record.provider,
          active: record.active,
          config: decryptJson<ProviderConfig>(this.secretsKey, record.configCiphertext),
        }
      : null;
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(id, { connection, expiresAt: now + this.ttlMs });
    return connection;
  }

  forget(id: string): void {
    this.entries.delete(id);
  }
}
