/**
 * The per-key request limit (RATE_LIMIT_PER_MINUTE), counted in fixed one-minute windows shared by
 * every API process through Redis, without a Redis round trip on the request path: each process
 * counts locally and adds its counts to the shared one every `flushMs`, reading the total back.
 * A request is refused when the last known total plus this process's unflushed count reaches the
 * limit.
 *
 * Tolerance (docs/api.md "Rate limits"): one process alone is exact. With several, each may admit
 * what it receives for a key during one flush interval before it learns the others' counts, so a
 * key can exceed the limit by at most (processes − 1) × its request rate × `flushMs`. If Redis is
 * unreachable every process limits on its own counts: the limit is a guard, not a correctness
 * property, and reads never fail on Redis.
 */
import type { Logger } from '../log.js';
import type { RedisConnection } from '../queue/connection.js';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets (Retry-After when refused). */
  resetSeconds: number;
}

interface WindowCount {
  windowStart: number;
  /** The key's total across processes at the last flush (this process's flushed counts included). */
  shared: number;
  /** Counted here since the last flush. */
  unflushed: number;
  /** Being added to Redis by the flush in flight. */
  inFlight: number;
}

export class KeyRateLimiter {
  private readonly counts = new Map<string, WindowCount>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;

  constructor(
    private readonly redis: RedisConnection,
    private readonly prefix: string,
    private readonly limit: number,
    private readonly log: Logger,
    /** The clock every window is computed from (tests fix it so a test never straddles two windows). */
    private readonly nowMs: () => number = Date.now,
    private readonly windowMs = 60_000,
    private readonly flushMs = 100,
  ) {}

  take(key: string): RateDecision {
    const nowMs = this.nowMs();
    const windowStart = nowMs - (nowMs % this.windowMs);
    let count = this.counts.get(key);
    if (!count || count.windowStart !== windowStart) {
      count = { windowStart, shared: 0, unflushed: 0, inFlight: 0 };
      this.counts.set(key, count);
    }
    const used = count.shared + count.unflushed + count.inFlight;
    const resetSeconds = Math.max(1, Math.ceil((windowStart + this.windowMs - nowMs) / 1000));
    if (used >= this.limit) return { allowed: false, limit: this.limit, remaining: 0, resetSeconds };
    count.unflushed += 1;
    this.schedule();
    return { allowed: true, limit: this.limit, remaining: this.limit - used - 1, resetSeconds };
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.flushing = this.flush().finally(() => {
        this.flushing = null;
      });
    }, this.flushMs);
    this.timer.unref();
  }

  /** Adds the unflushed counts to Redis and learns every key's total; forgets past windows. */
  async flush(): Promise<void> {
    const nowMs = this.nowMs();
    const sent: Array<[string, WindowCount, number]> = [];
    for (const [key, count] of this.counts) {
      if (count.windowStart + this.windowMs <= nowMs) this.counts.delete(key);
      else if (count.unflushed > 0) {
        sent.push([key, count, count.unflushed]);
        count.inFlight += count.unflushed;
        count.unflushed = 0;
      }
    }
    if (sent.length === 0) return;
    const pipeline = this.redis.pipeline();
    for (const [key, count, n] of sent) {
      const redisKey = `${this.prefix}:ratelimit:${key}:${count.windowStart}`;
      pipeline.incrby(redisKey, n).pexpire(redisKey, this.windowMs * 2);
    }
    try {
      const results = (await pipeline.exec()) ?? [];
      sent.forEach(([, count, n], i) => {
        count.inFlight -= n;
        const [error, total] = results[i * 2] ?? [new Error('no answer'), null];
        // Without an answer the counts stay ours alone: kept as shared, so this process still limits.
        count.shared = error ? count.shared + n : Math.max(count.shared + n, Number(total));
      });
    } catch (err) {
      for (const [, count, n] of sent) {
        count.inFlight -= n;
        count.shared += n;
      }
      this.log.warn({ err: (err as Error).message }, 'rate limit counts not shared (Redis)');
    }
  }

  /** Stops the timer and shares what is left (graceful shutdown). */
  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.flushing;
    await this.flush().catch(() => {});
  }
}
