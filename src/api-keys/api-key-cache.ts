/**
 * In-process cache of API key lookups, so an authenticated read costs one Postgres round trip
 * instead of two (loopback round trips dominate the read path: docs/performance.md).
 *
 * Revocation stays immediate: the operator API broadcasts each revoked key id on a Redis channel
 * and every API process evicts it. The cache is consulted only while this process is subscribed
 * to that channel; when the subscription drops, the cache is emptied and every request goes to
 * Postgres until it is back. Entries also expire after `ttlMs`, bounding any gap.
 */
import type { RedisConnection } from '../queue/connection.js';
import type { Logger } from '../log.js';

export interface CachedPrincipal {
  keyId: string;
  companyId: string;
}

export class ApiKeyCache {
  private readonly entries = new Map<string, { principal: CachedPrincipal; expiresAt: number }>();
  private listening = false;
  /**
   * Bumped by every eviction. A lookup notes it before reading Postgres and caches its result
   * only if no eviction happened meanwhile, so a revocation that lands between the read and the
   * `set` can never be cached over.
   */
  private evictions = 0;

  constructor(
    private readonly subscriber: RedisConnection,
    readonly channel: string,
    private readonly log: Logger,
    private readonly ttlMs = 30_000,
    private readonly maxEntries = 10_000,
  ) {}

  /** Subscribes to revocations; safe to call once. Resolves when the first subscription is live. */
  async start(): Promise<void> {
    this.subscriber.on('message', (channel: string, keyId: string) => {
      if (channel === this.channel) this.evict(keyId);
    });
    const stopListening = () => {
      this.listening = false;
      this.evictions++;
      this.entries.clear();
    };
    this.subscriber.on('close', stopListening);
    this.subscriber.on('reconnecting', stopListening);
    this.subscriber.on('ready', () => void this.subscribe());
    if (this.subscriber.status === 'ready') await this.subscribe();
  }

  private async subscribe(): Promise<void> {
    try {
      await this.subscriber.subscribe(this.channel);
      this.listening = true;
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'API key revocation channel unavailable; not caching keys');
    }
  }

  get(hash: string, now: number): CachedPrincipal | undefined {
    if (!this.listening) return undefined;
    const entry = this.entries.get(hash);
    if (!entry) return undefined;
    if (entry.expiresAt <= now) {
      this.entries.delete(hash);
      return undefined;
    }
    return entry.principal;
  }

  /** A token to pass to `set` for a lookup that starts now. */
  version(): number {
    return this.evictions;
  }

  set(hash: string, principal: CachedPrincipal, now: number, version: number): void {
    if (!this.listening || version !== this.evictions) return;
    // Maps iterate in insertion order, so the first key is the oldest entry.
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(hash, { principal, expiresAt: now + this.ttlMs });
  }

  evict(keyId: string): void {
    this.evictions++;
    for (const [hash, entry] of this.entries) {
      if (entry.principal.keyId === keyId) this.entries.delete(hash);
    }
  }
}

/** Tells every API process that a key is revoked; the caller has already committed the revocation. */
export async function broadcastRevocation(publisher: RedisConnection, channel: string, keyId: string): Promise<void> {
  await publisher.publish(channel, keyId);
}
