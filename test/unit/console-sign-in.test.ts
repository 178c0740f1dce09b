/** The pure parts of the console's sign-in limits: the password work gate and the Redis keys. */
import { describe, expect, it } from 'vitest';
import { signInKeys } from '../../src/console/sign-in-limiter.js';
import { WorkGate } from '../../src/security/passwords.js';

describe('password work gate', () => {
  it('runs at most `running` tasks at once, queues `waiting` more in order, and refuses the next at once', async () => {
    const gate = new WorkGate(2, 3, () => new Error('busy'));
    let active = 0;
    let peak = 0;
    const started: number[] = [];
    const releases: Array<() => void> = [];
    const task = (i: number) => () => {
      started.push(i);
      active++;
      peak = Math.max(peak, active);
      return new Promise<number>((resolve) =>
        releases.push(() => {
          active--;
          resolve(i);
        }),
      );
    };
    const accepted = [0, 1, 2, 3, 4].map((i) => gate.run(task(i)));
    await expect(gate.run(task(5))).rejects.toThrow('busy');
    await Promise.resolve();
    expect(started).toEqual([0, 1]);
    while (releases.length > 0) {
      releases.shift()!();
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await Promise.all(accepted)).toEqual([0, 1, 2, 3, 4]);
    expect(started).toEqual([0, 1, 2, 3, 4]);
    expect(peak).toBe(2);
    // Free again: a failing task gives its slot back too.
    await expect(gate.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await gate.run(async () => 'ok')).toBe('ok');
  });
});

/** The part of a key Redis Cluster hashes: the first non-empty `{…}`, else the whole key. */
function hashTag(key: string): string {
  const open = key.indexOf('{');
  const close = open < 0 ? -1 : key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}

describe('console sign-in keys', () => {
  it('share the hash tag of REDIS_PREFIX, so one script may use both on a Redis Cluster; the email is not in them', () => {
    const keys = signInKeys('{fleet}', 'Dana@Example.test', '2001:db8::1');
    expect(keys.map(hashTag)).toEqual(['fleet', 'fleet']);
    expect(keys.join()).not.toContain('example');
    expect(signInKeys('{fleet}', 'dana@example.test', '2001:db8::1')).toEqual(keys);
  });
});
