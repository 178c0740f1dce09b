import { Redis } from 'ioredis';
import type { Logger } from '../log.js';

/**
 * Redis connections. Workers block on Redis and must retry for ever (`maxRetriesPerRequest:
 * null`); producers and the API fail fast when Redis is away so a request never hangs on it.
 */
export function createRedis(url: string, role: 'worker' | 'client', log: Logger): Redis {
  const redis = new Redis(url, role === 'worker'
    ? { maxRetriesPerRequest: null }
    : { maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 2_000 });
  redis.on('error', (err: Error) => log.warn({ err: err.message, role }, 'redis connection error'));
  return redis;
}
