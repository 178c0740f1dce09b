import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { ApiKeyCache, broadcastRevocation } from '../../src/api-keys/api-key-cache.js';
import { createLogger } from '../../src/log.js';

const log = createLogger('silent');
const connections: Redis[] = [];
afterEach(() => {
  for (const redis of connections.splice(0)) redis.disconnect();
});

function redis(): Redis {
  const connection = new Redis(inject('redisUrl'));
  connections.push(connection);
  return connection;
}

async function cache(maxEntries = 100) {
  const channel = `test:${randomBytes(4).toString('hex')}:revoked`;
  const subscriber = redis();
  await new Promise((resolve) => subscriber.once('ready', resolve));
  const keys = new ApiKeyCache(subscriber, channel, log, 30_000, maxEntries);
  await keys.start();
  return { keys, subscriber, channel, publisher: redis() };
}

const principal = { keyId: 'k1', companyId: 'c1' };

describe('ApiKeyCache over real Redis', () => {
  it('serves a cached key until its TTL', async () => {
    const { keys } = await cache();
    keys.set('h1', principal, 1000, keys.version());
    expect(keys.get('h1', 1000 + 29_999)).toEqual(principal);
    expect(keys.get('h1', 1000 + 30_000)).toBeUndefined();
  });

  it('evicts a key when its revocation is broadcast', async () => {
    const { keys, channel, publisher } = await cache();
    keys.set('h1', principal, 0, keys.version());
    keys.set('h2', { keyId: 'k2', companyId: 'c1' }, 0, keys.version());
    await broadcastRevocation(publisher, channel, 'k1');
    await expect.poll(() => keys.get('h1', 1)).toBeUndefined();
    expect(keys.get('h2', 1)?.keyId).toBe('k2');
  });

  it('never caches a lookup that a revocation overtook', async () => {
    const { keys, channel, publisher } = await cache();
    const version = keys.version();
    // The revocation arrives while the lookup is still waiting for Postgres.
    await broadcastRevocation(publisher, channel, 'k1');
    await expect.poll(() => keys.version()).not.toBe(version);
    keys.set('h1', principal, 0, version);
    expect(keys.get('h1', 1)).toBeUndefined();
  });

  it('stops caching while the revocation channel is down, and resumes after reconnecting', async () => {
    const { keys, subscriber } = await cache();
    keys.set('h1', principal, 0, keys.version());
    subscriber.disconnect(true);
    await expect.poll(() => keys.get('h1', 1)).toBeUndefined();
    await expect.poll(() => subscriber.status).toBe('ready');
    await expect
      .poll(() => {
        keys.set('h2', principal, 2, keys.version());
        return keys.get('h2', 3);
      })
      .toEqual(principal);
  });

  it('bounds its size by dropping the oldest entry', async () => {
    const { keys } = await cache(3);
    for (const hash of ['a', 'b', 'c', 'd']) keys.set(hash, { ...principal, keyId: hash }, 0, keys.version());
    expect(keys.get('a', 1)).toBeUndefined();
    expect(keys.get('d', 1)?.keyId).toBe('d');
  });
});
