import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

const key = 'ab'.repeat(32);

function errorOf(env: Record<string, string>): string {
  try {
    loadConfig({ SECRETS_KEY: key, ...env });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('config', () => {
  it('has working defaults', () => {
    const config = loadConfig({ SECRETS_KEY: key });
    expect(config).toMatchObject({
      databaseUrl: 'postgres://postgres@127.0.0.1:5432/fleet',
      redisUrl: 'redis://127.0.0.1:6379',
      port: 3000,
      adminToken: null,
      webhookTimeoutMs: 10_000,
      webhookAllowNets: [],
      monitoringRetryDelaysMs: [60_000, 300_000, 900_000],
      logLevel: 'info',
      databaseConnectTimeoutMs: 5000,
      databaseStatementTimeoutMs: 30_000,
      databaseIdleInTransactionTimeoutMs: 60_000,
      scheduleCheckIntervalMs: 10_000,
      healthSweepConcurrentPages: 2,
      apiRole: 'all',
      secretsKeyGenerated: false,
    });
    expect(config.secretsKey).toEqual(Buffer.from(key, 'hex'));
  });

  it('names the bad variable in one line', () => {
    expect(errorOf({ PORT: 'eighty' })).toBe(
      'Invalid configuration: PORT must be an integer from 0 to 65535 (got "eighty")',
    );
    expect(errorOf({ DATABASE_URL: 'mysql://x' })).toMatch(/^Invalid configuration: DATABASE_URL must use postgres:/);
    expect(errorOf({ REDIS_URL: 'not a url' })).toBe('Invalid configuration: REDIS_URL is not a valid URL');
    expect(errorOf({ WEBHOOK_ALLOW_NETS: '127.0.0.1/32, banana' })).toMatch(/WEBHOOK_ALLOW_NETS has "banana"/);
    expect(errorOf({ MONITORING_RETRY_DELAYS_MS: '60s' })).toMatch(
      /^Invalid configuration: MONITORING_RETRY_DELAYS_MS/,
    );
    expect(errorOf({ ADMIN_TOKEN: 'short' })).toMatch(/ADMIN_TOKEN must be at least 16 characters/);
    expect(errorOf({ LOG_LEVEL: 'loud' })).toMatch(/^Invalid configuration: LOG_LEVEL/);
    expect(errorOf({ API_ROLE: 'write' })).toBe(
      'Invalid configuration: API_ROLE must be one of all, ingest, read (got "write")',
    );
    expect(errorOf({ SECRETS_KEY: 'too-short' })).toMatch(/^Invalid configuration: SECRETS_KEY must be 32 bytes/);
    expect(errorOf({ SECRETS_KEY: '', NODE_ENV: 'production' })).toBe(
      'Invalid configuration: SECRETS_KEY is required when NODE_ENV=production',
    );
    expect(errorOf({ DATABASE_STATEMENT_TIMEOUT_MS: '0' })).toBe(
      'Invalid configuration: DATABASE_STATEMENT_TIMEOUT_MS must be an integer from 100 to 3600000 (got "0")',
    );
    expect(errorOf({ SCHEDULE_CHECK_INTERVAL_MS: '10s' })).toMatch(
      /^Invalid configuration: SCHEDULE_CHECK_INTERVAL_MS/,
    );
    for (const message of [errorOf({ PORT: 'x' }), errorOf({ SECRETS_KEY: 'x' })]) expect(message).not.toContain('\n');
  });

  it('parses lists', () => {
    const config = loadConfig({
      SECRETS_KEY: key,
      WEBHOOK_ALLOW_NETS: '127.0.0.1/32,10.0.0.0/8',
      MONITORING_RETRY_DELAYS_MS: '10,20,30',
    });
    expect(config.webhookAllowNets).toEqual(['127.0.0.1/32', '10.0.0.0/8']);
    expect(config.monitoringRetryDelaysMs).toEqual([10, 20, 30]);
  });
});

describe('config: proxies and per-company limits', () => {
  it('TRUST_PROXY is off by default and takes true, false, a hop count or proxy addresses', () => {
    expect(loadConfig({ SECRETS_KEY: key }).trustProxy).toBe(false);
    expect(loadConfig({ SECRETS_KEY: key, TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ SECRETS_KEY: key, TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ SECRETS_KEY: key, TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ SECRETS_KEY: key, TRUST_PROXY: '10.0.0.0/8, 192.0.2.7,loopback' }).trustProxy).toEqual([
      '10.0.0.0/8',
      '192.0.2.7',
      'loopback',
    ]);
    expect(errorOf({ TRUST_PROXY: 'proxy.internal' })).toMatch(
      /^Invalid configuration: TRUST_PROXY has "proxy.internal"/,
    );
    expect(errorOf({ TRUST_PROXY: '0' })).toMatch(/^Invalid configuration: TRUST_PROXY must be an integer from 1/);
  });

  it('caps webhook subscriptions and Send test calls per company', () => {
    expect(loadConfig({ SECRETS_KEY: key })).toMatchObject({
      webhookSubscriptionsPerCompany: 100,
      webhookTestsPerMinute: 10,
    });
    const config = loadConfig({
      SECRETS_KEY: key,
      WEBHOOK_SUBSCRIPTIONS_PER_COMPANY: '3',
      WEBHOOK_TESTS_PER_MINUTE: '2',
    });
    expect(config).toMatchObject({ webhookSubscriptionsPerCompany: 3, webhookTestsPerMinute: 2 });
    expect(errorOf({ WEBHOOK_SUBSCRIPTIONS_PER_COMPANY: '0' })).toMatch(/WEBHOOK_SUBSCRIPTIONS_PER_COMPANY must be/);
    expect(errorOf({ WEBHOOK_TESTS_PER_MINUTE: 'many' })).toMatch(/WEBHOOK_TESTS_PER_MINUTE must be/);
  });

  it('caps monitoring subscriptions, geofences and dry-run readings', () => {
    expect(loadConfig({ SECRETS_KEY: key })).toMatchObject({
      monitoringSubscriptionsPerCompany: 10_000,
      geofencesPerCompany: 1000,
      monitoringDryRunMaxReadings: 100_000,
    });
    const config = loadConfig({
      SECRETS_KEY: key,
      MONITORING_SUBSCRIPTIONS_PER_COMPANY: '5',
      GEOFENCES_PER_COMPANY: '7',
      MONITORING_DRY_RUN_MAX_READINGS: '500',
    });
    expect(config).toMatchObject({
      monitoringSubscriptionsPerCompany: 5,
      geofencesPerCompany: 7,
      monitoringDryRunMaxReadings: 500,
    });
    expect(errorOf({ MONITORING_SUBSCRIPTIONS_PER_COMPANY: '0' })).toMatch(
      /MONITORING_SUBSCRIPTIONS_PER_COMPANY must be/,
    );
    expect(errorOf({ GEOFENCES_PER_COMPANY: '-1' })).toMatch(/GEOFENCES_PER_COMPANY must be/);
    expect(errorOf({ MONITORING_DRY_RUN_MAX_READINGS: '1e6' })).toMatch(/MONITORING_DRY_RUN_MAX_READINGS must be/);
  });
});
