/** The per-key limit shared by API processes through Redis, counted locally between flushes. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyRateLimiter } from '../../src/api/key-rate-limiter.js';
import { createLogger } from '../../src/log.js';
import { createRedis, type RedisConnection } from '../../src/queue/connection.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { midMinuteClock } from '../helpers/clock.js';

const log = createLogger('silent');
let t: TestApp;
let redis: RedisConnection;
const minute = 60_000;
// Every take and flush reads this clock, so a test never straddles two windows.
const clock = midMinuteClock();
const now = clock().getTime();
const nowMs = () => now;

beforeAll(async () => {
  t = await createTestApp();
  redis = t.redis; // the API process's own Redis client (fails fast while not connected)
  if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve));
});
afterAll(() => t.close());

const takeMany = (limiter: KeyRateLimiter, key: string, n: number) =>
  Array.from({ length: n }, () => limiter.take(key).allowed);

describe('KeyRateLimiter', () => {
  it('alone is exact: the limit-th request passes, the next is refused with the seconds to the window end', () => {
    const limiter = new KeyRateLimiter(redis, t.config.redisPrefix, 5, log, nowMs);
    expect(takeMany(limiter, 'alone', 6)).toEqual([true, true, true, true, true, false]);
    const refused = limiter.take('alone');
    expect(refused).toEqual({ allowed: false, limit: 5, remaining: 0, resetSeconds: 30 });
    expect(limiter.take('another key')).toMatchObject({ allowed: true, remaining: 4 });
  });

  it('two processes share one budget: each learns the total at its flushes, overshooting by at most what came between', async () => {
    const a = new KeyRateLimiter(redis, t.config.redisPrefix, 10, log, nowMs);
    const b = new KeyRateLimiter(redis, t.config.redisPrefix, 10, log, nowMs);
    const total = async () =>
      Number(await redis.get(`${t.config.redisPrefix}:ratelimit:shared:${now - (now % minute)}`));
    expect(takeMany(a, 'shared', 4)).toEqual([true, true, true, true]);
    expect(takeMany(b, 'shared', 4)).toEqual([true, true, true, true]);
    await a.flush();
    await b.flush();
    expect(await total()).toBe(8);
    // a still believes 4 are used: it admits 2 more, learns the total of 10 at its flush, then refuses.
    expect(takeMany(a, 'shared', 2)).toEqual([true, true]);
    await a.flush();
    expect(a.take('shared').allowed).toBe(false);
    // b last heard 8: one request slips through before its flush tells it the budget is gone.
    expect(b.take('shared').allowed).toBe(true);
    await b.flush();
    expect(b.take('shared').allowed).toBe(false);
    expect(await total()).toBe(11);
  });

  it('keeps limiting on its own counts when Redis is unreachable', async () => {
    const dead = createRedis({ redisUrl: 'redis://127.0.0.1:1', redisCluster: false }, 'client', log);
    try {
      const limiter = new KeyRateLimiter(dead, t.config.redisPrefix, 3, log, nowMs);
      expect(takeMany(limiter, 'offline', 2)).toEqual([true, true]);
      await limiter.flush();
      expect(takeMany(limiter, 'offline', 2)).toEqual([true, false]);
    } finally {
      dead.disconnect();
    }
  });
});
