/** What the console's pages are given (src/api/app.ts passes it to the console plugin). */
import type { ApiKeyCache } from '../api-keys/api-key-cache.js';
import type { Config } from '../config.js';
import type { ConsoleSessionRecord } from '../db/console-sessions.js';
import type { Pool } from '../db/pool.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { RedisConnection } from '../queue/connection.js';
import type { Queues } from '../queue/queues.js';

export interface ConsoleDeps {
  config: Config;
  pool: Pool;
  redis: RedisConnection;
  queues: Queues;
  keyCache: ApiKeyCache;
  log: Logger;
  metrics: Metrics;
  now: () => Date;
}

declare module 'fastify' {
  interface FastifyRequest {
    consoleSession: ConsoleSessionRecord;
  }
  interface FastifyContextConfig {
    /** A console data call (polled by a script): answers 401, never a redirect, once the session ended. */
    consoleData?: boolean;
    /** A page with the vehicle map: its CSP also allows images from the map tile host. */
    consoleMap?: boolean;
  }
}
