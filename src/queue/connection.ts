import { Cluster, Redis } from 'ioredis';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';

/** A single Redis server, or a Redis Cluster (REDIS_CLUSTER): BullMQ and our own calls take either. */
export type RedisConnection = Redis | Cluster;

const roleOptions = {
  // Workers block on Redis and must retry for ever.
  worker: { maxRetriesPerRequest: null },
  // The API's own calls (rate limit, readiness, pub/sub) fail fast so a request never hangs on Redis.
  client: { maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 2_000 },
  // Job producers in the API: fail fast too, but queue commands during the first connect.
  producer: { maxRetriesPerRequest: 1, connectTimeout: 2_000 },
} as const;

/**
 * A Redis connection configured for its role. With `redisCluster`, `redisUrl` names one node (a
 * seed): the client discovers the others and follows slot moves.
 */
export function createRedis(
  { redisUrl, redisCluster }: Pick<Config, 'redisUrl' | 'redisCluster'>,
  role: keyof typeof roleOptions,
  log: Logger,
): RedisConnection {
  const redis = redisCluster ? clusterClient(redisUrl, role) : new Redis(redisUrl, roleOptions[role]);
  redis.on('error', (err: Error) => log.warn({ err: err.message, role }, 'redis connection error'));
  return redis;
}

function clusterClient(url: string, role: keyof typeof roleOptions): Cluster {
  const seed = new URL(url);
  const { maxRetriesPerRequest, ...nodeOptions } = roleOptions[role] as {
    maxRetriesPerRequest: number | null;
    enableOfflineQueue?: boolean;
    connectTimeout?: number;
  };
  return new Cluster([{ host: seed.hostname, port: Number(seed.port || 6379) }], {
    ...(nodeOptions.enableOfflineQueue === false ? { enableOfflineQueue: false } : {}),
    redisOptions: {
      maxRetriesPerRequest,
      ...(nodeOptions.connectTimeout ? { connectTimeout: nodeOptions.connectTimeout } : {}),
      ...(seed.username ? { username: decodeURIComponent(seed.username) } : {}),
      ...(seed.password ? { password: decodeURIComponent(seed.password) } : {}),
      ...(seed.protocol === 'rediss:' ? { tls: {} } : {}),
    },
  });
}
