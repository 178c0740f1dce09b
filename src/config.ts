/**
 * The only module that reads `process.env`. Everything else receives a typed `Config`.
 * Each setting is declared once in the table below: its variable, its default and its meaning
 * (with the unit), and how it is read. The table builds `Config` and the README's configuration
 * table (checked by test/unit/readme.test.ts). Bad configuration stops start-up with one line
 * naming the variable (README "Configuration").
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { projectRoot } from './paths.js';

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    detail: string,
  ) {
    super(`Invalid configuration: ${variable} ${detail}`);
  }
}

type Env = Record<string, string | undefined>;

export interface ConfigVariable {
  name: string;
  /** The default as the README shows it. */
  default: string;
  description: string;
}

interface Setting<T> extends ConfigVariable {
  read(env: Env): T;
}

function read(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function integer(name: string, fallback: number, min: number, max: number, description: string): Setting<number> {
  return {
    name,
    default: String(fallback),
    description,
    read: (env) => {
      const raw = read(env, name);
      if (raw === undefined) return fallback;
      if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
        throw new ConfigError(name, `must be an integer from ${min} to ${max} (got "${raw}")`);
      }
      return Number(raw);
    },
  };
}

function parseUrl(name: string, raw: string, protocols: string[]): string {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, 'is not a valid URL');
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must use ${protocols.join(' or ')} (got "${parsed.protocol}")`);
  }
  return raw;
}

function url(name: string, fallback: string, protocols: string[], description: string): Setting<string> {
  return {
    name,
    default: fallback,
    description,
    read: (env) => parseUrl(name, read(env, name) ?? fallback, protocols),
  };
}

/** A comma-separated list of URLs, each checked as `url` checks one. */
function urlList(name: string, protocols: string[], description: string): Setting<string[]> {
  return {
    name,
    default: '(empty)',
    description,
    read: (env) =>
      (read(env, name) ?? '')
        .split(',')
        .map((part) => part.trim())
        .filter(Boolean)
        .map((part) => parseUrl(name, part, protocols)),
  };
}

/** A map tile URL template and the one origin pages load its images from (the CSP's img-src). */
export interface MapTiles {
  urlTemplate: string;
  /** `scheme://host[:port]`; a `{s}` subdomain label becomes `*.`. */
  imageSource: string;
}

// A host as the URL parser normalises it (lower case, punycode), or an IPv6 literal; anything
// else (`;`, quotes, `*`) could break out of the CSP the host is written into.
const hostPattern = /^(?:[a-z0-9-]+\.)*[a-z0-9-]+$|^\[[0-9a-f:.]+\]$/;

/** A Leaflet tile URL (`{z}`, `{x}`, `{y}`, optionally `{s}` as the first label of the host). */
function mapTiles(name: string, fallback: string, description: string): Setting<MapTiles> {
  return {
    name,
    default: fallback,
    description,
    read: (env) => {
      const urlTemplate = parseUrl(name, read(env, name) ?? fallback, ['http:', 'https:']);
      const parsed = new URL(urlTemplate);
      if (!['{z}', '{x}', '{y}'].every((part) => urlTemplate.includes(part))) {
        throw new ConfigError(name, `must contain {z}, {x} and {y} (got "${urlTemplate}")`);
      }
      if (parsed.username !== '' || parsed.password !== '') {
        throw new ConfigError(name, 'must not carry a user name or password: every browser would see them');
      }
      const subdomains = parsed.hostname.startsWith('{s}.');
      const host = subdomains ? parsed.hostname.slice('{s}.'.length) : parsed.hostname;
      if (!hostPattern.test(host)) throw new ConfigError(name, `has a host a browser cannot load ("${host}")`);
      const port = parsed.port === '' ? '' : `:${parsed.port}`;
      return { urlTemplate, imageSource: `${parsed.protocol}//${subdomains ? '*.' : ''}${host}${port}` };
    },
  };
}

const cidrPattern = /^(\d{1,3}(\.\d{1,3}){3}\/\d{1,2}|[0-9a-fA-F:]+\/\d{1,3})$/;

function cidrList(env: Env, name: string): string[] {
  const raw = read(env, name);
  if (raw === undefined) return [];
  const nets = raw
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
  for (const net of nets) {
    if (!cidrPattern.test(net)) throw new ConfigError(name, `has "${net}", which is not a CIDR such as 127.0.0.1/32`);
  }
  return nets;
}

function delayList(env: Env, name: string, fallback: number[]): number[] {
  const raw = read(env, name);
  if (raw === undefined) return fallback;
  const parts = raw.split(',').map((part) => part.trim());
  if (parts.some((part) => !/^\d+$/.test(part))) {
    throw new ConfigError(name, `must be comma-separated milliseconds such as 60000,300000,900000 (got "${raw}")`);
  }
  return parts.map(Number);
}

/** Where a development machine keeps its generated key, so encrypted rows stay readable across restarts. */
function developmentSecretsKey(): Buffer {
  const dir = join(projectRoot, '.data');
  const file = join(dir, 'secrets.key');
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(file, randomBytes(32).toString('hex'), { mode: 0o600, flag: 'wx' });
  }
  return Buffer.from(readFileSync(file, 'utf8').trim(), 'hex');
}

const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof logLevels)[number];

const proxyNames = ['loopback', 'linklocal', 'uniquelocal'];

function trustProxy(env: Env): boolean | number | string[] {
  const raw = read(env, 'TRUST_PROXY');
  if (raw === undefined || raw === 'false') return false;
  if (raw === 'true') return true;
  if (/^\d+$/.test(raw)) {
    if (Number(raw) < 1 || Number(raw) > 100)
      throw new ConfigError('TRUST_PROXY', `must be an integer from 1 to 100 (got "${raw}")`);
    return Number(raw);
  }
  const proxies = raw
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean);
  for (const proxy of proxies) {
    if (!(isIP(proxy) !== 0 || cidrPattern.test(proxy) || proxyNames.includes(proxy))) {
      throw new ConfigError(
        'TRUST_PROXY',
        `has "${proxy}": give true, false, a hop count, or addresses, CIDRs and ${proxyNames.join('/')}`,
      );
    }
  }
  return proxies;
}

/** `ingest`: provider pushes only; `read`: everything else; `all`: both (API_ROLE). */
const apiRoles = ['all', 'ingest', 'read'] as const;
export type ApiRole = (typeof apiRoles)[number];

const port = integer('PORT', 3000, 0, 65535, 'HTTP port of the API (and of the ops endpoints of a worker process).');

/** Every setting of the service, in README order. */
const settings = {
  databaseUrl: url(
    'DATABASE_URL',
    'postgres://postgres@127.0.0.1:5432/fleet',
    ['postgres:', 'postgresql:'],
    'Postgres connection string. `npm start` creates the database if it is missing and migrates it.',
  ),
  databasePoolSize: integer('DATABASE_POOL_SIZE', 10, 1, 500, 'Postgres connections per process.'),
  databaseConnectTimeoutMs: integer(
    'DATABASE_CONNECT_TIMEOUT_MS',
    5000,
    100,
    600_000,
    'How long a query waits for a pooled Postgres connection (a free one, or a new one to open), in milliseconds; then it fails (an API request answers 503).',
  ),
  databaseStatementTimeoutMs: integer(
    'DATABASE_STATEMENT_TIMEOUT_MS',
    30_000,
    100,
    3_600_000,
    'Longest one SQL statement may run, lock waits included (Postgres `statement_timeout`), in milliseconds; then Postgres cancels it (an API request answers 503). Migrations are exempt.',
  ),
  databaseIdleInTransactionTimeoutMs: integer(
    'DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS',
    60_000,
    100,
    3_600_000,
    'Longest a connection may sit idle inside an open transaction (Postgres `idle_in_transaction_session_timeout`), in milliseconds; then Postgres ends the session and frees its locks.',
  ),
  databaseReplicaUrls: urlList(
    'DATABASE_REPLICA_URLS',
    ['postgres:', 'postgresql:'],
    'Comma-separated connection strings of streaming replicas of DATABASE_URL. The public API\'s reads go to a replica within DATABASE_REPLICA_MAX_LAG_MS that has replayed the API key\'s last write (read-your-writes), else to the primary; writes, the console, ingest and workers always use DATABASE_URL (docs/scaling.md "Read replicas"). Each replica gets DATABASE_POOL_SIZE connections per API process.',
  ),
  databaseReplicaMaxLagMs: integer(
    'DATABASE_REPLICA_MAX_LAG_MS',
    2000,
    0,
    3_600_000,
    'A replica further behind the primary than this, in milliseconds, gets no reads until it has caught up again.',
  ),
  databaseReplicaCheckIntervalMs: integer(
    'DATABASE_REPLICA_CHECK_INTERVAL_MS',
    500,
    100,
    60_000,
    "How often each API process measures every replica's lag, in milliseconds; a replica that does not answer within this time counts as unreachable and gets no reads until a later check reaches it.",
  ),
  redisUrl: url(
    'REDIS_URL',
    'redis://127.0.0.1:6379',
    ['redis:', 'rediss:'],
    'Redis for queues and rate limits (run it with AOF and `maxmemory-policy noeviction`).',
  ),
  redisCluster: {
    name: 'REDIS_CLUSTER',
    default: 'false',
    description:
      '`true` when REDIS_URL names one node of a Redis Cluster: the others are discovered from it, and queue keys share the hash tag of REDIS_PREFIX.',
    read: (env: Env): boolean => {
      const raw = read(env, 'REDIS_CLUSTER') ?? 'false';
      if (raw !== 'true' && raw !== 'false')
        throw new ConfigError('REDIS_CLUSTER', `must be true or false (got "${raw}")`);
      return raw === 'true';
    },
  },
  redisPrefix: {
    name: 'REDIS_PREFIX',
    default: '{fleet}',
    description: 'Key prefix for queues and rate limits; the braces are a Redis Cluster hash tag.',
    read: (env: Env): string => {
      const prefix = read(env, 'REDIS_PREFIX') ?? '{fleet}';
      if (prefix.includes(':')) throw new ConfigError('REDIS_PREFIX', 'must not contain ":"');
      return prefix;
    },
  },
  workerHeapMiB: integer(
    'WORKER_HEAP_MIB',
    2048,
    0,
    65_536,
    "Cap on the V8 old space of a `worker` process, in MiB (Node's `--max-old-space-size`, set by starting the worker under it; it replaces one given in `NODE_OPTIONS`). Sized so four ingest jobs of 32 payloads of `BODY_LIMIT_BYTES` each fit (docs/performance.md, Ingestion); pushes near `INGEST_BODY_LIMIT_BYTES` need more. 0 leaves V8's default, a share of the machine's memory.",
  ),
  scheduleCheckIntervalMs: integer(
    'SCHEDULE_CHECK_INTERVAL_MS',
    10_000,
    100,
    600_000,
    'How often each worker process checks that the repeating jobs of its queues exist in Redis and recreates missing ones (Redis lost its data), in milliseconds.',
  ),
  healthRelayIntervalMs: integer(
    'HEALTH_RELAY_INTERVAL_MS',
    5000,
    100,
    600_000,
    'How often the health relay enqueues the evaluations that committed ingest batches owe but never enqueued (the process died between commit and enqueue, or Redis was away), in milliseconds; it takes those owed at least this long, so after a crash derived state follows within about twice this.',
  ),
  healthSweepConcurrentPages: integer(
    'HEALTH_SWEEP_CONCURRENT_PAGES',
    2,
    1,
    16,
    'Pages of the health sweep (500 vehicles each, 50 of monitored vehicles; one transaction each) evaluated at once by a worker process, each on its own Postgres connection.',
  ),
  port,
  host: {
    name: 'HOST',
    default: '0.0.0.0',
    description: 'Interface the HTTP server binds to.',
    read: (env: Env): string => read(env, 'HOST') ?? '0.0.0.0',
  },
  apiRole: {
    name: 'API_ROLE',
    default: 'all',
    description:
      'What an API process (`npm run api`, `npm start`) serves: `all`; `ingest`, only provider pushes (`/ingest/v1`) and `/healthz`, `/readyz`, `/metrics`; `read`, everything but provider pushes (they answer 404). With `ingest` and `read` processes behind one load balancer, pushes never share an event loop with reads (docs/scaling.md "Process roles").',
    read: (env: Env): ApiRole => {
      const role = read(env, 'API_ROLE') ?? 'all';
      if (!(apiRoles as readonly string[]).includes(role))
        throw new ConfigError('API_ROLE', `must be one of ${apiRoles.join(', ')} (got "${role}")`);
      return role as ApiRole;
    },
  },
  adminToken: {
    name: 'ADMIN_TOKEN',
    default: '(unset: operator API off)',
    description: 'Bearer token of the operator API `/admin/v1`, at least 16 characters.',
    read: (env: Env): string | null => {
      const token = read(env, 'ADMIN_TOKEN') ?? null;
      if (token !== null && token.length < 16) throw new ConfigError('ADMIN_TOKEN', 'must be at least 16 characters');
      return token;
    },
  },
  metricsToken: {
    name: 'METRICS_TOKEN',
    default: '(unset: /metrics open)',
    description:
      'When set, `GET /metrics` of every process (API and workers) asks for `Authorization: Bearer <METRICS_TOKEN>` and answers 401 without it; at least 16 characters. `/healthz` and `/readyz` stay open.',
    read: (env: Env): string | null => {
      const token = read(env, 'METRICS_TOKEN') ?? null;
      if (token !== null && token.length < 16) throw new ConfigError('METRICS_TOKEN', 'must be at least 16 characters');
      return token;
    },
  },
  secretsKey: {
    name: 'SECRETS_KEY',
    default: '(generated into .data/secrets.key outside production)',
    description:
      '32-byte key, base64 or hex, that encrypts signing secrets and provider credentials at rest. Required when NODE_ENV=production.',
    read: (env: Env): Buffer => {
      const raw = read(env, 'SECRETS_KEY');
      if (raw === undefined) {
        if (read(env, 'NODE_ENV') === 'production') {
          throw new ConfigError('SECRETS_KEY', 'is required when NODE_ENV=production');
        }
        return developmentSecretsKey();
      }
      const key = /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
      if (key.length !== 32) throw new ConfigError('SECRETS_KEY', 'must be 32 bytes, as 64 hex characters or base64');
      return key;
    },
  },
  webhookTimeoutMs: integer(
    'WEBHOOK_TIMEOUT_MS',
    10_000,
    100,
    120_000,
    'Deadline of one webhook delivery attempt, in milliseconds.',
  ),
  webhookAllowNets: {
    name: 'WEBHOOK_ALLOW_NETS',
    default: '(empty)',
    description:
      'Comma-separated CIDRs that webhooks may reach despite the SSRF guard (plain http:// is allowed to them).',
    read: (env: Env): string[] => cidrList(env, 'WEBHOOK_ALLOW_NETS'),
  },
  monitoringRetryDelaysMs: {
    name: 'MONITORING_RETRY_DELAYS_MS',
    default: '60000,300000,900000',
    description: 'Delays before the monitoring webhook retries, in milliseconds.',
    read: (env: Env): number[] => delayList(env, 'MONITORING_RETRY_DELAYS_MS', [60_000, 300_000, 900_000]),
  },
  monitoringManualRetriesPerHour: integer(
    'MONITORING_MANUAL_RETRIES_PER_HOUR',
    5,
    1,
    1000,
    "Manual retries (`POST /v1/deliveries/:id/retry`, the console's Retry; recover counts one per delivery it queues) one monitoring delivery may get in any rolling hour; one more answers 429 `RATE_LIMITED` with `Retry-After`.",
  ),
  monitoringManualRetriesPerDelivery: integer(
    'MONITORING_MANUAL_RETRIES_PER_DELIVERY',
    20,
    1,
    10_000,
    'Manual retries one monitoring delivery may get in all (recover included); one more answers 409 `LIMIT_REACHED`.',
  ),
  rateLimitPerMinute: integer(
    'RATE_LIMIT_PER_MINUTE',
    1200,
    1,
    10_000_000,
    'Requests per minute per API key; over it the API answers 429 with Retry-After.',
  ),
  readingsRetentionMonths: integer(
    'READINGS_RETENTION_MONTHS',
    0,
    0,
    1200,
    'Whole months of raw readings kept before the current one; older monthly partitions are dropped by the daily maintenance job. 0 keeps all. History reports read rollups, which are kept.',
  ),
  inboxRetentionDays: integer(
    'INBOX_RETENTION_DAYS',
    0,
    0,
    36_500,
    'Days processed raw payloads stay in the ingest inbox (and can be replayed); older ones are deleted by the hourly maintenance job. Rows still owed processing or parked are always kept. 0 keeps all.',
  ),
  webhookRetentionDays: integer(
    'WEBHOOK_RETENTION_DAYS',
    0,
    0,
    36_500,
    'Days core webhook events are kept with their deliveries and attempts (what the delivery log shows); older settled ones are deleted by the hourly maintenance job. 0 keeps all. Monitoring keeps its own by tier.',
  ),
  vehicleCacheEntries: integer(
    'VEHICLE_CACHE_ENTRIES',
    20_000,
    0,
    10_000_000,
    'Vehicles whose presented JSON each API process keeps (about 2 KB each), so reads of unchanged vehicles skip decoding and serializing them; 0 turns the cache off.',
  ),
  bodyLimitBytes: integer(
    'BODY_LIMIT_BYTES',
    1_048_576,
    1024,
    100 * 1_048_576,
    'Largest request body on the public and operator APIs, in bytes; larger answers 413.',
  ),
  ingestBodyLimitBytes: integer(
    'INGEST_BODY_LIMIT_BYTES',
    10 * 1_048_576,
    1024,
    512 * 1_048_576,
    'Largest provider push on /ingest/v1, in bytes; larger answers 413.',
  ),
  ingestRateLimitPerMinute: integer(
    'INGEST_RATE_LIMIT_PER_MINUTE',
    12_000,
    1,
    10_000_000,
    "Verified pushes per minute per provider connection on `/ingest/v1`, counted in Redis and shared by all API processes; over it 429 with `Retry-After`. Unsigned or wrongly signed pushes do not count, so nobody without the secret can use up a connection's allowance. If Redis is unreachable the limit is skipped.",
  ),
  trustProxy: {
    name: 'TRUST_PROXY',
    default: 'false',
    description:
      'Set it when the API runs behind a reverse proxy or load balancer: `true` (trust every hop), a hop count, or the ' +
      "proxies' addresses/CIDRs (`10.0.0.0/8,loopback`). Then the client address (per-address failed-auth limit) and " +
      'host come from `X-Forwarded-For`/`-Host`. Leave it `false` when clients connect directly: they could forge them.',
    read: trustProxy,
  },
  webhookSubscriptionsPerCompany: integer(
    'WEBHOOK_SUBSCRIPTIONS_PER_COMPANY',
    100,
    1,
    100_000,
    'Most live webhook subscriptions one company may have; one more answers 409 `LIMIT_REACHED`.',
  ),
  monitoringSubscriptionsPerCompany: integer(
    'MONITORING_SUBSCRIPTIONS_PER_COMPANY',
    10_000,
    1,
    10_000_000,
    'Most live monitoring subscriptions (`POST /v1/runs/subscribe`) one company may have; one more answers 409 `LIMIT_REACHED`.',
  ),
  geofencesPerCompany: integer(
    'GEOFENCES_PER_COMPANY',
    1000,
    1,
    100_000,
    'Most live geofences (`POST /v1/geofences`) one company may have; one more answers 409 `LIMIT_REACHED`.',
  ),
  geofenceVerticesPerCompany: integer(
    'GEOFENCE_VERTICES_PER_COMPANY',
    200_000,
    1,
    100_000_000,
    "Most vertices over all of one company's live geofences (a polygon counts every position of its rings, a circle 1); a fence that would go over answers 409 `LIMIT_REACHED`.",
  ),
  monitoringDryRunMaxReadings: integer(
    'MONITORING_DRY_RUN_MAX_READINGS',
    100_000,
    1,
    10_000_000,
    'Most stored readings (and, separately, provider events) one dry run (`POST /v1/subscriptions/:id/dry-run`) replays; a `since` that covers more answers 400.',
  ),
  monitoringDryRunMaxFenceTests: integer(
    'MONITORING_DRY_RUN_MAX_FENCE_TESTS',
    50_000_000,
    1,
    10_000_000_000,
    'Most geofence geometry tests (a polygon edge tested against a fix or a segment, a circle measured) one dry run may run; past it the dry run answers 422 `WORK_BUDGET_EXCEEDED`.',
  ),
  cpuPoolThreads: integer(
    'CPU_POOL_THREADS',
    2,
    1,
    64,
    'Worker threads of each API process that run CPU-heavy requests (dry runs, report PDFs) off its event loop; started on demand, at a lower CPU priority, and stopped after a minute idle.',
  ),
  cpuPoolQueue: integer(
    'CPU_POOL_QUEUE',
    16,
    0,
    10_000,
    'CPU-heavy requests that may wait for a free thread of the pool; one more answers 503 `SERVICE_UNAVAILABLE` with `Retry-After`.',
  ),
  cpuPoolTasksPerCompany: integer(
    'CPU_POOL_TASKS_PER_COMPANY',
    2,
    1,
    10_000,
    "CPU-heavy requests (dry runs, report PDFs) one company may have running or waiting in an API process's pool at once; one more answers 429 `RATE_LIMITED` with `Retry-After`, so one tenant's burst never fills the queue the others wait in.",
  ),
  cpuTaskBudgetMs: integer(
    'CPU_TASK_BUDGET_MS',
    15_000,
    10,
    600_000,
    'Longest one CPU-heavy request (a dry run, a report PDF) may compute on its thread, in milliseconds, not counting its wait for a thread nor the reading of its input; then the thread is stopped and the request answers 422 `WORK_BUDGET_EXCEEDED`.',
  ),
  webhookTestsPerMinute: integer(
    'WEBHOOK_TESTS_PER_MINUTE',
    10,
    1,
    10_000,
    'Send test calls per company per minute; more answer 429 `RATE_LIMITED` with `Retry-After`.',
  ),
  consoleSessionIdleMs: integer(
    'CONSOLE_SESSION_IDLE_MS',
    30 * 60_000,
    60_000,
    7 * 86_400_000,
    'A console session ends after this long without a request, in milliseconds.',
  ),
  consoleSessionAbsoluteMs: integer(
    'CONSOLE_SESSION_ABSOLUTE_MS',
    12 * 3_600_000,
    60_000,
    30 * 86_400_000,
    'A console session ends this long after sign-in whatever its use, in milliseconds.',
  ),
  consoleSignInFailuresPerEmail: integer(
    'CONSOLE_SIGN_IN_FAILURES_PER_EMAIL',
    5,
    1,
    10_000,
    'Failed console sign-ins per email per CONSOLE_SIGN_IN_WINDOW_MS (counted in Redis); then 429 with Retry-After.',
  ),
  consoleSignInFailuresPerAddress: integer(
    'CONSOLE_SIGN_IN_FAILURES_PER_ADDRESS',
    20,
    1,
    100_000,
    'Failed console sign-ins per client address (see TRUST_PROXY) per CONSOLE_SIGN_IN_WINDOW_MS; then 429 with Retry-After.',
  ),
  consoleSignInWindowMs: integer(
    'CONSOLE_SIGN_IN_WINDOW_MS',
    15 * 60_000,
    1000,
    86_400_000,
    'Window of the console sign-in failure counts, in milliseconds.',
  ),
  consoleMapTiles: mapTiles(
    'CONSOLE_MAP_TILES_URL',
    'https://tile.openstreetmap.org/{z}/{x}/{y}.png',
    "Map tiles of the console's Vehicles page (a Leaflet URL template: `{z}`, `{x}`, `{y}`, and `{s}` as the host's first label for subdomains). The console's Content Security Policy allows images from this host alone, on that page. The default is OpenStreetMap's tile server, whose usage policy suits light use; give your own tile server or provider for more.",
  ),
  consoleMapAttribution: {
    name: 'CONSOLE_MAP_ATTRIBUTION',
    default: '© OpenStreetMap contributors',
    description:
      "Attribution shown on the console's map for CONSOLE_MAP_TILES_URL's tiles, as plain text, at most 200 characters; change it with the tiles.",
    read: (env: Env): string => {
      const text = read(env, 'CONSOLE_MAP_ATTRIBUTION') ?? '© OpenStreetMap contributors';
      if (text.length > 200) throw new ConfigError('CONSOLE_MAP_ATTRIBUTION', 'must be at most 200 characters');
      return text;
    },
  },
  apiKeysPerCompany: integer(
    'API_KEYS_PER_COMPANY',
    50,
    1,
    10_000,
    'Most live (unrevoked) API keys one company may have, each with its own rate limit; one more (operator API or console) answers 409 `LIMIT_REACHED`.',
  ),
  logLevel: {
    name: 'LOG_LEVEL',
    default: 'info',
    description: 'fatal, error, warn, info, debug, trace or silent.',
    read: (env: Env): LogLevel => {
      const level = read(env, 'LOG_LEVEL') ?? 'info';
      if (!(logLevels as readonly string[]).includes(level)) {
        throw new ConfigError('LOG_LEVEL', `must be one of ${logLevels.join(', ')} (got "${level}")`);
      }
      return level as LogLevel;
    },
  },
};

/** Read by the SECRETS_KEY setting only; documented here so the README lists it. */
const nodeEnv: ConfigVariable = {
  name: 'NODE_ENV',
  default: '(unset)',
  description: '`production` makes SECRETS_KEY mandatory.',
};

const fleetApiUrl = {
  name: 'FLEET_API_URL',
  default: 'http://127.0.0.1:$PORT',
  description: 'fleetctl only: base URL of the service whose operator API it drives.',
  read: (env: Env): string =>
    parseUrl('FLEET_API_URL', read(env, 'FLEET_API_URL') ?? `http://127.0.0.1:${port.read(env)}`, ['http:', 'https:']),
} satisfies Setting<string>;

type Settings = typeof settings;
type SettingValues = { [K in keyof Settings]: ReturnType<Settings[K]['read']> };

export type Config = SettingValues & {
  /** True when `secretsKey` came from the generated development key file. */
  secretsKeyGenerated: boolean;
};

/** Every variable the service and fleetctl read, for the README table and the compose-file test. */
export const configVariables: readonly ConfigVariable[] = [...Object.values(settings), nodeEnv, fleetApiUrl].map(
  ({ name, default: fallback, description }) => ({ name, default: fallback, description }),
);

export function loadConfig(env: Env = process.env): Config {
  const values = Object.fromEntries(
    Object.entries(settings).map(([key, setting]: [string, Setting<unknown>]) => [key, setting.read(env)]),
  );
  return {
    ...(values as SettingValues),
    secretsKeyGenerated: read(env, 'SECRETS_KEY') === undefined,
  };
}

export interface CliConfig {
  apiUrl: string;
  adminToken: string | null;
  databaseUrl: string;
}

/** fleetctl's settings: where the operator API is and its token (plus the database for `migrate`). */
export function loadCliConfig(env: Env = process.env): CliConfig {
  return {
    apiUrl: fleetApiUrl.read(env).replace(/\/+$/, ''),
    adminToken: settings.adminToken.read(env),
    databaseUrl: settings.databaseUrl.read(env),
  };
}
