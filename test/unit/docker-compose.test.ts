import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { configVariables, loadConfig } from '../../src/config.js';
import { projectRoot } from '../../src/paths.js';

const compose = parse(readFileSync(join(projectRoot, 'docker-compose.yml'), 'utf8'));
const known = new Set(configVariables.map((v) => v.name));

/** Resolves ${VAR}, ${VAR:-default} and ${VAR:?message} the way compose does, with sample values. */
function interpolate(value: string, env: Record<string, string>): string {
  return value.replace(/\$\{([A-Z_]+)(?::([-?])([^}]*))?\}/g, (_m, name: string, kind?: string, rest?: string) => {
    if (env[name] !== undefined) return env[name]!;
    if (kind === '-') return rest ?? '';
    throw new Error(`${name} is required: ${rest}`);
  });
}

describe('docker-compose.yml', () => {
  it('has postgres, redis, api and a replicated workers service', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['api', 'postgres', 'redis', 'workers']);
    expect(compose.services.workers.deploy.replicas).toBeGreaterThanOrEqual(2);
    expect(compose.services.workers.command).toEqual(['node', 'dist/server/main.js', 'worker']);
    expect(compose.services.api.command).toEqual(['node', 'dist/server/main.js', 'api']);
  });

  it('runs Redis with AOF and noeviction, as BullMQ requires', () => {
    const command: string[] = compose.services.redis.command;
    expect(command.join(' ')).toContain('--appendonly yes');
    expect(command.join(' ')).toContain('--maxmemory-policy noeviction');
  });

  it('gives api and workers only variables the config module reads, and a configuration it accepts', () => {
    for (const service of ['api', 'workers']) {
      const environment: Record<string, string> = compose.services[service].environment;
      for (const name of Object.keys(environment)) expect(known.has(name), `${service}: ${name}`).toBe(true);
      for (const required of ['DATABASE_URL', 'REDIS_URL', 'ADMIN_TOKEN', 'SECRETS_KEY'])
        expect(environment).toHaveProperty(required);
      const sample = { ADMIN_TOKEN: 'a'.repeat(32), SECRETS_KEY: 'ab'.repeat(32) };
      const resolved = Object.fromEntries(
        Object.entries(environment).map(([k, v]) => [k, interpolate(String(v), sample)]),
      );
      const config = loadConfig(resolved);
      expect(new URL(config.databaseUrl).hostname).toBe('postgres');
      expect(new URL(config.redisUrl).hostname).toBe('redis');
      expect(compose.services.api.ports).toContain(`${config.port}:${config.port}`);
      expect(() => interpolate(String(environment.SECRETS_KEY), {})).toThrow(/SECRETS_KEY is required/);
    }
  });
});
