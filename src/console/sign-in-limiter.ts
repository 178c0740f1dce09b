/**
 * Failed console sign-ins counted per email and per client address in Redis, so every API
 * process shares the counts (unlike src/api/failed-auth-limiter.ts, which guards 256-bit keys in
 * process; a password is worth guessing across processes). Fixed windows: the first failure
 * starts the window. Only failures count, so a user who types the right password is never
 * refused because of someone else's attempts on another email. If Redis is unreachable the
 * limit is skipped (logged), like the API's other limits.
 */
import { createHash } from 'node:crypto';
import type { RedisConnection } from '../queue/connection.js';
import type { Logger } from '../log.js';

export interface SignInLimits {
  failuresPerEmail: number;
  failuresPerAddress: number;
  windowMs: number;
}

export class SignInLimiter {
  constructor(
    private readonly redis: RedisConnection,
    private readonly prefix: string,
    private readonly limits: SignInLimits,
    private readonly log: Logger,
  ) {}

  private keys(email: string, address: string): [string, number][] {
    // The email is hashed so Redis holds no addresses of people.
    const emailHash = createHash('sha256').update(email.toLowerCase()).digest('base64url');
    return [
      [`${this.prefix}:console-sign-in:email:${emailHash}`, this.limits.failuresPerEmail],
      [`${this.prefix}:console-sign-in:address:${address}`, this.limits.failuresPerAddress],
    ];
  }

  /** Milliseconds until sign-in is allowed again for this email or address, or 0 when it is. */
  async blockedFor(email: string, address: string): Promise<number> {
    try {
      const pipeline = this.redis.multi();
      for (const [key] of this.keys(email, address)) pipeline.get(key).pttl(key);
      const replies = (await pipeline.exec()) ?? [];
      let blockedMs = 0;
      this.keys(email, address).forEach(([, limit], i) => {
        const count = Number(replies[i * 2]?.[1] ?? 0);
        const ttl = Number(replies[i * 2 + 1]?.[1] ?? 0);
        if (count >= limit) blockedMs = Math.max(blockedMs, ttl > 0 ? ttl : this.limits.windowMs);
      });
      return blockedMs;
    } catch (err) {
      this.log.warn({ err }, 'console sign-in limit skipped: Redis unreachable');
      return 0;
    }
  }

  async recordFailure(email: string, address: string): Promise<void> {
    try {
      const pipeline = this.redis.multi();
      for (const [key] of this.keys(email, address)) pipeline.set(key, 0, 'PX', this.limits.windowMs, 'NX').incr(key);
      await pipeline.exec();
    } catch (err) {
      this.log.warn({ err }, 'console sign-in failure not counted: Redis unreachable');
    }
  }
}
