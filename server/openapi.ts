/**
 * `node dist/server/openapi.js [--operator]`: prints the OpenAPI document the API serves at
 * /openapi.json, without listening. The public document by default (what integrators and the SDK
 * see); `--operator` adds the operator API. `npm run sdk:generate` feeds it to the SDK's generator.
 * The app is built the way the API builds it; no request is made, so Postgres and Redis need
 * not be reachable.
 */
import { randomBytes } from 'node:crypto';
import { buildApp } from '../src/api/app.js';
import { loadConfig } from '../src/config.js';
import { createPool } from '../src/db/pool.js';
import { createLogger } from '../src/log.js';
import { createMetrics } from '../src/metrics.js';
import { createRedis } from '../src/queue/connection.js';
import { Queues } from '../src/queue/queues.js';

const operator = process.argv.includes('--operator');
const { ADMIN_TOKEN: _unused, ...env } = process.env;
const config = loadConfig({
  ...env,
  LOG_LEVEL: 'silent',
  SECRETS_KEY: env.SECRETS_KEY ?? randomBytes(32).toString('hex'),
  ...(operator ? { ADMIN_TOKEN: randomBytes(24).toString('hex') } : {}),
});
const log = createLogger(config.logLevel);
const pool = createPool(config.databaseUrl, 1, log, config);
const redis = createRedis(config, 'client', log);
const queues = new Queues(redis, config.redisPrefix);
const app = await buildApp({ config, pool, redis, log, queues, metrics: createMetrics('openapi'), migrationIds: [] });
await app.ready();
process.stdout.write(`${JSON.stringify(app.swagger(), null, 2)}\n`);
await app.close();
await queues.close();
await pool.end();
redis.disconnect();
