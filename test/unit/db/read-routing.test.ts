import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { isReplicaFailure } from '../../../src/db/read-routing.js';
import { lsnValue } from '../../../src/db/replication.js';

describe('lsnValue', () => {
  it('orders WAL positions as Postgres does, past 32 bits', () => {
    expect(lsnValue('0/0')).toBe(0n);
    expect(lsnValue('16/B374D848')).toBe((0x16n << 32n) | 0xb374d848n);
    expect(lsnValue('1/0') > lsnValue('0/FFFFFFFF')).toBe(true);
    expect(() => lsnValue('16B374D848')).toThrow('not an LSN');
  });
});

describe('isReplicaFailure', () => {
  const database = (code: string) => Object.assign(new pg.DatabaseError('failed', 0, 'error'), { code });

  it('takes a lost, refused or timed-out connection and a recovery conflict as the replica failing', () => {
    expect(isReplicaFailure(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isReplicaFailure(new Error('timeout exceeded when trying to connect'))).toBe(true);
    expect(isReplicaFailure(new Error('Client has encountered a connection error and is not queryable'))).toBe(true);
    expect(isReplicaFailure(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toBe(true);
    for (const code of ['57P01', '57P03', '08006', '40001', '3D000'])
      expect(isReplicaFailure(database(code))).toBe(true);
  });

  it('leaves a statement that fails on its own to fail', () => {
    for (const code of ['42P01', '22P02', '57014']) expect(isReplicaFailure(database(code))).toBe(false);
    expect(isReplicaFailure(new TypeError('x is not a function'))).toBe(false);
    expect(isReplicaFailure('nope')).toBe(false);
  });
});

describe('replica settings', () => {
  it('read a comma-separated list of Postgres URLs, each checked', () => {
    const config = loadConfig({
      DATABASE_REPLICA_URLS: ' postgres://r1:5432/fleet , postgresql://r2/fleet ',
      SECRETS_KEY: '00'.repeat(32),
    });
    expect(config.databaseReplicaUrls).toEqual(['postgres://r1:5432/fleet', 'postgresql://r2/fleet']);
    expect([config.databaseReplicaMaxLagMs, config.databaseReplicaCheckIntervalMs]).toEqual([2000, 500]);
    expect(loadConfig({ SECRETS_KEY: '00'.repeat(32) }).databaseReplicaUrls).toEqual([]);
    expect(() =>
      loadConfig({ DATABASE_REPLICA_URLS: 'postgres://r1/fleet,redis://r2', SECRETS_KEY: '00'.repeat(32) }),
    ).toThrow('DATABASE_REPLICA_URLS must use postgres: or postgresql: (got "redis:")');
  });
});
