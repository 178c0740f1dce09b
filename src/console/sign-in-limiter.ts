/**
 * Console sign-in attempts counted per email and per client address in Redis, so every API
 * process shares the counts (unlike src/api/failed-auth-limiter.ts, which guards 256-bit keys in
 * process; a password is worth guessing across processes). Fixed windows: the first attempt
 * starts the window.
 *
 * An attempt is reserved before its password is checked, for the email and the address at once
 * in one Lua script (both or neither), so a burst of concurrent wrong passwords gets at most the
 * limit of checks: a count raised only after the check would let every request of the burst
 * through the check before any of them counted. A failed attempt keeps its reservation (it is the
 * failure count); a successful one, or one that never reached the check, gives it back, so only
 * failures stay counted and a user who types the right password is never refused because of
 * someone else's failures on another email.
 *
 * Both keys start with REDIS_PREFIX, whose `{…}` hash tag puts them in one Redis Cluster slot, as
 * a script's keys must be. If Redis is unreachable the limit is skipped (logged), like the API's
 * other limits; the password work itself stays bounded (src/security/passwords.ts).
 */
import { createHash } from 'node:crypto';
import type { RedisConnection } from '../queue/connection.js';
import type { Logger } from '../log.js';

export interface SignInLimits {
  failuresPerEmail: number;
  failuresPerAddress: number;
  windowMs: number;
}

/** Either a reserved attempt (give it back unless the password was wrong) or how long to wait. */
export type SignInReservation = { allowed: true; release(): Promise<void> } | { allowed: false; retryAfterMs: number };

// KEYS: the email's and the address's counters. ARGV: their limits, then the window.
// Answers 0 when both counters were raised, else the milliseconds until the fuller one expires.
const reserveScript = `
local waitMs = 0
for i = 1, 2 do
  if tonumber(redis.call('GET', KEYS[i]) or '0') >= tonumber(ARGV[i]) then
    local ttl = redis.call('PTTL', KEYS[i])
    if ttl < 0 then ttl = tonumber(ARGV[3]) end
    if ttl > waitMs then waitMs = ttl end
  end
end
if waitMs > 0 then return waitMs end
for i = 1, 2 do
  if redis.call('INCR', KEYS[i]) == 1 then redis.call('PEXPIRE', KEYS[i], ARGV[3]) end
end
return 0`;

// Gives one reservation back, keeping the window's expiry; a counter gone meanwhile (its window
// ended) is not recreated or pushed below zero.
const releaseScript = `
for i = 1, 2 do
  if tonumber(redis.call('GET', KEYS[i]) or '0') > 0 then redis.call('DECR', KEYS[i]) end
end
return 0`;

interface SignInScripts {
  consoleSignInReserve(emailKey: string, addressKey: string, ...limits: number[]): Promise<number>;
  consoleSignInRelease(emailKey: string, addressKey: string): Promise<number>;
}

/** The two counters of an attempt; the email is hashed so Redis holds no addresses of people. */
export function signInKeys(prefix: string, email: string, address: string): [emailKey: string, addressKey: string] {
  const emailHash = createHash('sha256').update(email.toLowerCase()).digest('base64url');
  return [`${prefix}:console-sign-in:email:${emailHash}`, `${prefix}:console-sign-in:address:${address}`];
}

export class SignInLimiter {
  private readonly scripts: SignInScripts;

  constructor(
    redis: RedisConnection,
    private readonly prefix: string,
    private readonly limits: SignInLimits,
    private readonly log: Logger,
  ) {
    // Sent once per connection, then called by SHA (EVALSHA).
    redis.defineCommand('consoleSignInReserve', { numberOfKeys: 2, lua: reserveScript });
    redis.defineCommand('consoleSignInRelease', { numberOfKeys: 2, lua: releaseScript });
    this.scripts = redis as unknown as SignInScripts;
  }

  async reserve(email: string, address: string): Promise<SignInReservation> {
    const keys = signInKeys(this.prefix, email, address);
    const { failuresPerEmail, failuresPerAddress, windowMs } = this.limits;
    let waitMs: number;
    try {
      waitMs = await this.scripts.consoleSignInReserve(...keys, failuresPerEmail, failuresPerAddress, windowMs);
    } catch (err) {
      this.log.warn({ err }, 'console sign-in limit skipped: Redis unreachable');
      return { allowed: true, release: async () => {} };
    }
    if (waitMs > 0) return { allowed: false, retryAfterMs: waitMs };
    return {
      allowed: true,
      release: async () => {
        try {
          await this.scripts.consoleSignInRelease(...keys);
        } catch (err) {
          this.log.warn({ err }, 'console sign-in attempt not given back: Redis unreachable');
        }
      },
    };
  }
}
