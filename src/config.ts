/**
 * The only module that reads `process.env`. Everything else receives a typed `Config`.
 * Bad configuration stops start-up with one line naming the variable (DESIGN §3).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from './paths.js';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Config {
  databaseUrl: string;
  databasePoolSize: number;
  redisUrl: string;
  /** BullMQ and rate-limit key prefix; a `{hash tag}` keeps every key in one Redis Cluster slot. */
  redisPrefix: string;
  port: number;
  host: string;
  /** Bearer token of the operator API; null turns the operator API off. */
  adminToken: string | null;
  /** 32-byte AES-256-GCM key for secrets at rest. */
  secretsKey: Buffer;
  /** True when `secretsKey` came from the generated development key file. */
  secretsKeyGenerated: boolean;
  webhookTimeoutMs: number;
  webhookAllowNets: string[];
  monitoringRetryDelaysMs: number[];
  logLevel: LogLevel;
  /** Requests per minute per API key on `/api/v1` and `/v1`. */
  rateLimitPerMinute: number;
  /** Largest accepted request body on the public and operator APIs, in bytes. */
  bodyLimitBytes: number;
  /** Largest accepted provider push, in bytes. */
  ingestBodyLimitBytes: number;
}

export class ConfigError extends Error {
  constructor(readonly variable: string, detail: string) {
    super(`Invalid configuration: ${variable} ${detail}`);
  }
}

export interface ConfigVariable {
  name: string;
  default: string;
  description: string;
}

/** Every setting the service reads, for the README table and the compose-file test. */
export const configVariables: readonly ConfigVariable[] = [
  { name: 'DATABASE_URL', default: 'postgres://postgres@127.0.0.1:5432/fleet', description: 'Postgres connection string. `npm start` creates the database if it is missing and migrates it.' },
  { name: 'DATABASE_POOL_SIZE', default: '10', description: 'Postgres connections per process.' },
  { name: 'REDIS_URL', default: 'redis://127.0.0.1:6379', description: 'Redis for queues and rate limits (run it with AOF and `maxmemory-policy noeviction`).' },
  { name: 'REDIS_PREFIX', default: '{fleet}', description: 'Key prefix for queues and rate limits; the braces are a Redis Cluster hash tag.' },
  { name: 'PORT', default: '3000', description: 'HTTP port of the API (and of the ops endpoints of a worker process).' },
  { name: 'HOST', default: '0.0.0.0', description: 'Interface the HTTP server binds to.' },
  { name: 'ADMIN_TOKEN', default: '(unset: operator API off)', description: 'Bearer token of the operator API `/admin/v1`, at least 16 characters.' },
  { name: 'SECRETS_KEY', default: '(generated into .data/secrets.key outside production)', description: '32-byte key, base64 or hex, that encrypts signing secrets and provider credentials at rest. Required when NODE_ENV=production.' },
  { name: 'WEBHOOK_TIMEOUT_MS', default: '10000', description: 'Deadline of one webhook delivery attempt, in milliseconds.' },
  { name: 'WEBHOOK_ALLOW_NETS', default: '(empty)', description: 'Comma-separated CIDRs that webhooks may reach despite the SSRF guard (plain http:// is allowed to them).' },
  { name: 'MONITORING_RETRY_DELAYS_MS', default: '60000,300000,900000', description: 'Delays before the monitoring webhook retries, in milliseconds.' },
  { name: 'RATE_LIMIT_PER_MINUTE', default: '1200', description: 'Requests per minute per API key; over it the API answers 429 with Retry-After.' },
  { name: 'BODY_LIMIT_BYTES', default: '1048576', description: 'Largest request body on the public and operator APIs, in bytes; larger answers 413.' },
  { name: 'INGEST_BODY_LIMIT_BYTES', default: '10485760', description: 'Largest provider push on /ingest/v1, in bytes; larger answers 413.' },
  { name: 'LOG_LEVEL', default: 'info', description: 'fatal, error, warn, info, debug, trace or silent.' },
  { name: 'NODE_ENV', default: '(unset)', description: '`production` makes SECRETS_KEY mandatory.' },
  { name: 'FLEET_API_URL', default: 'http://127.0.0.1:$PORT', description: 'fleetctl only: base URL of the service whose operator API it drives.' },
];

type Env = Record<string, string | undefined>;

function read(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = read(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(name, `must be an integer from ${min} to ${max} (got "${raw}")`);
  }
  return Number(raw);
}

function url(env: Env, name: string, fallback: string, protocols: string[]): string {
  const raw = read(env, name) ?? fallback;
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

const cidrPattern = /^(\d{1,3}(\.\d{1,3}){3}\/\d{1,2}|[0-9a-fA-F:]+\/\d{1,3})$/;

function cidrList(env: Env, name: string): string[] {
  const raw = read(env, name);
  if (raw === undefined) return [];
  const nets = raw.split(',').map((part) => part.trim()).filter(Boolean);
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

function secretsKey(env: Env): { key: Buffer; generated: boolean } {
  const raw = read(env, 'SECRETS_KEY');
  if (raw !== undefined) {
    const key = /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
    if (key.length !== 32) throw new ConfigError('SECRETS_KEY', 'must be 32 bytes, as 64 hex characters or base64');
    return { key, generated: false };
  }
  if (read(env, 'NODE_ENV') === 'production') {
    throw new ConfigError('SECRETS_KEY', 'is required when NODE_ENV=production');
  }
  // A developer machine gets a stable key on disk so encrypted rows stay readable across restarts.
  const dir = join(projectRoot, '.data');
  const file = join(dir, 'secrets.key');
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(file, randomBytes(32).toString('hex'), { mode: 0o600, flag: 'wx' });
  }
  return { key: Buffer.from(readFileSync(file, 'utf8').trim(), 'hex'), generated: true };
}

const defaultDatabaseUrl = 'postgres://postgres@127.0.0.1:5432/fleet';

const logLevels: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export function loadConfig(env: Env = process.env): Config {
  const adminToken = read(env, 'ADMIN_TOKEN') ?? null;
  if (adminToken !== null && adminToken.length < 16) {
    throw new ConfigError('ADMIN_TOKEN', 'must be at least 16 characters');
  }
  const logLevel = (read(env, 'LOG_LEVEL') ?? 'info') as LogLevel;
  if (!logLevels.includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `must be one of ${logLevels.join(', ')} (got "${logLevel}")`);
  }
  const redisPrefix = read(env, 'REDIS_PREFIX') ?? '{fleet}';
  if (redisPrefix.includes(':')) throw new ConfigError('REDIS_PREFIX', 'must not contain ":"');
  const secrets = secretsKey(env);
  return {
    databaseUrl: url(env, 'DATABASE_URL', defaultDatabaseUrl, ['postgres:', 'postgresql:']),
    databasePoolSize: integer(env, 'DATABASE_POOL_SIZE', 10, 1, 500),
    redisUrl: url(env, 'REDIS_URL', 'redis://127.0.0.1:6379', ['redis:', 'rediss:']),
    redisPrefix,
    port: integer(env, 'PORT', 3000, 0, 65535),
    host: read(env, 'HOST') ?? '0.0.0.0',
    adminToken,
    secretsKey: secrets.key,
    secretsKeyGenerated: secrets.generated,
    webhookTimeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000),
    webhookAllowNets: cidrList(env, 'WEBHOOK_ALLOW_NETS'),
    monitoringRetryDelaysMs: delayList(env, 'MONITORING_RETRY_DELAYS_MS', [60_000, 300_000, 900_000]),
    logLevel,
    rateLimitPerMinute: integer(env, 'RATE_LIMIT_PER_MINUTE', 1200, 1, 10_000_000),
    bodyLimitBytes: integer(env, 'BODY_LIMIT_BYTES', 1_048_576, 1024, 100 * 1_048_576),
    ingestBodyLimitBytes: integer(env, 'INGEST_BODY_LIMIT_BYTES', 10 * 1_048_576, 1024, 512 * 1_048_576),
  };
}

export interface CliConfig {
  apiUrl: string;
  adminToken: string | null;
  databaseUrl: string;
}

/** fleetctl's settings: where the operator API is and its token (plus the database for `migrate`). */
export function loadCliConfig(env: Env = process.env): CliConfig {
  const port = integer(env, 'PORT', 3000, 0, 65535);
  return {
    apiUrl: url(env, 'FLEET_API_URL', `http://127.0.0.1:${port}`, ['http:', 'https:']).replace(/\/+$/, ''),
    adminToken: read(env, 'ADMIN_TOKEN') ?? null,
    databaseUrl: url(env, 'DATABASE_URL', defaultDatabaseUrl, ['postgres:', 'postgresql:']),
  };
}
