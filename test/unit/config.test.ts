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
    });
    expect(config.secretsKey).toEqual(Buffer.from(key, 'hex'));
  });

  it('names the bad variable in one line', () => {
    expect(errorOf({ PORT: 'eighty' })).toBe('Invalid configuration: PORT must be an integer from 0 to 65535 (got "eighty")');
    expect(errorOf({ DATABASE_URL: 'mysql://x' })).toMatch(/^Invalid configuration: DATABASE_URL must use postgres:/);
    expect(errorOf({ REDIS_URL: 'not a url' })).toBe('Invalid configuration: REDIS_URL is not a valid URL');
    expect(errorOf({ WEBHOOK_ALLOW_NETS: '127.0.0.1/32, banana' })).toMatch(/WEBHOOK_ALLOW_NETS has "banana"/);
    expect(errorOf({ MONITORING_RETRY_DELAYS_MS: '60s' })).toMatch(/^Invalid configuration: MONITORING_RETRY_DELAYS_MS/);
    expect(errorOf({ ADMIN_TOKEN: 'short' })).toMatch(/ADMIN_TOKEN must be at least 16 characters/);
    expect(errorOf({ LOG_LEVEL: 'loud' })).toMatch(/^Invalid configuration: LOG_LEVEL/);
    expect(errorOf({ SECRETS_KEY: 'too-short' })).toMatch(/^Invalid configuration: SECRETS_KEY must be 32 bytes/);
    expect(errorOf({ SECRETS_KEY: '', NODE_ENV: 'production' })).toBe('Invalid configuration: SECRETS_KEY is required when NODE_ENV=production');
    for (const message of [errorOf({ PORT: 'x' }), errorOf({ SECRETS_KEY: 'x' })]) expect(message).not.toContain('\n');
  });

  it('parses lists', () => {
    const config = loadConfig({ SECRETS_KEY: key, WEBHOOK_ALLOW_NETS: '127.0.0.1/32,10.0.0.0/8', MONITORING_RETRY_DELAYS_MS: '10,20,30' });
    expect(config.webhookAllowNets).toEqual(['127.0.0.1/32', '10.0.0.0/8']);
    expect(config.monitoringRetryDelaysMs).toEqual([10, 20, 30]);
  });
});
