import { Redis } from 'ioredis';
import type { Logger } from '../log.js';

const roleOptions = {
  // Workers block on Redis and must retry for ever.
  worker: { maxRetriesPerRequest: null },
  // The API's own calls (rate limit, readiness, pub/sub) fail fast so a request never hangs on Redis.
  client: { maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 2_000 },
  // Job producers in the API: fail fast too, but queue commands during the first connect.
  producer: { maxRetriesPerRequest: 1, connectTimeout: 2_000 },
} as const;

/** A Redis connection configured for its role. */
export function createRedis(url: string, role: keyof typeof roleOptions, log: Logger): Redis {
  const redis = new Redis(url, roleOptions[role]);
  redis.on('error', (err: Error) => log.warn({ err: err.message, role }, 'redis connection error'));
  return redis;
}
