import { describe, expect, it } from 'vitest';
import type { VehicleRecord } from '../../../src/domain/vehicle.js';
import { presentedVehicleById, presentedVehicles, VehicleJsonCache } from '../../../src/api/vehicle-json-cache.js';

const row = (id: string, version: string) =>
  ({ id, version, name: `${id}@${version}` }) as unknown as VehicleRecord & {
    version: string;
  };
const bytes = (text: string) => Buffer.from(text);
const text = (json: Buffer | undefined) => json?.toString();

describe('VehicleJsonCache', () => {
  it('answers only the version it holds, and drops the least recently used past its size', () => {
    const cache = new VehicleJsonCache(2);
    cache.set('a', '1', bytes('{"a":1}'));
    cache.set('b', '1', bytes('{"b":1}'));
    expect(cache.get('a', '2')).toBeUndefined();
    expect(text(cache.get('a', '1'))).toBe('{"a":1}'); // a is now the most recently used
    cache.set('c', '1', bytes('{"c":1}'));
    expect([cache.get('a', '1'), cache.get('b', '1'), cache.get('c', '1')].map(text)).toEqual([
      '{"a":1}',
      undefined,
      '{"c":1}',
    ]);
    cache.set('a', '2', bytes('{"a":2}'));
    expect([text(cache.get('a', '1')), text(cache.get('a', '2')), cache.size]).toEqual([undefined, '{"a":2}', 2]);
  });

  it('keeps nothing with size 0', () => {
    const cache = new VehicleJsonCache(0);
    cache.set('a', '1', bytes('{}'));
    expect([cache.get('a', '1'), cache.size]).toEqual([undefined, 0]);
  });
});

describe('presentedVehicles', () => {
  it('loads and serializes only the rows whose version is not cached, answers in the order asked, skips vanished ids', async () => {
    const cache = new VehicleJsonCache(10);
    cache.set('a', '1', bytes('A1'));
    cache.set('b', '1', bytes('B1'));
    const loads: string[][] = [];
    const load = async (ids: string[]) => {
      loads.push(ids);
      // c was deactivated meanwhile; b comes back newer than asked, which is what is sent and kept.
      return ids.filter((id) => id !== 'c').map((id) => row(id, id === 'b' ? '3' : '2'));
    };
    const serialize = (v: VehicleRecord) => v.name!.toUpperCase();
    const wanted = [
      { id: 'b', version: '2' },
      { id: 'c', version: '1' },
      { id: 'a', version: '1' },
      { id: 'd', version: '2' },
    ];
    expect((await presentedVehicles(cache, wanted, load, serialize)).map(text)).toEqual(['B@3', 'A1', 'D@2']);
    expect(loads).toEqual([['b', 'c', 'd']]);
    expect([cache.get('b', '3'), cache.get('d', '2')].map(text)).toEqual(['B@3', 'D@2']);
    loads.length = 0;
    expect((await presentedVehicles(cache, [{ id: 'd', version: '2' }], load, serialize)).map(text)).toEqual(['D@2']);
    expect(loads).toEqual([]);
  });
});

describe('presentedVehicleById', () => {
  // A store of one row whose version the test moves; every query it answers is recorded.
  const setup = (hitRate: number) => {
    const cache = new VehicleJsonCache(10);
    const state = { version: '1' as string | null, queries: [] as string[] };
    const reads = { hitRate };
    const read = () =>
      presentedVehicleById(
        cache,
        'a',
        reads,
        async () => {
          state.queries.push('probe');
          return state.version;
        },
        async (ids) => {
          state.queries.push('load');
          return state.version === null ? [] : ids.map((id) => row(id, state.version!));
        },
        (v) => v.name!,
      ).then(text);
    return { cache, state, reads, read };
  };

  it('probing first: a hit is the probe alone, a miss the probe and a load', async () => {
    const { state, reads, read } = setup(1);
    expect(await read()).toBe('a@1');
    expect(await read()).toBe('a@1');
    state.version = '2';
    expect(await read()).toBe('a@2');
    expect(state.queries).toEqual(['probe', 'load', 'probe', 'probe', 'load']);
    expect(reads.hitRate).toBeLessThan(1);
    state.version = null; // deactivated or another company's
    state.queries.length = 0;
    expect(await read()).toBeUndefined();
    expect(state.queries).toEqual(['probe']);
  });

  it('loading first: one load per read, fresh after every write, serialized only when the version moved', async () => {
    const { cache, state, reads, read } = setup(0);
    expect(await read()).toBe('a@1');
    cache.set('a', '1', bytes('cached'));
    expect(await read()).toBe('cached'); // a hit: the cached JSON, not serialized again
    state.version = '2';
    expect(await read()).toBe('a@2');
    expect(state.queries).toEqual(['load', 'load', 'load']);
    expect(reads.hitRate).toBeGreaterThan(0);
    state.version = null;
    expect(await read()).toBeUndefined();
  });

  it('switches to loading first when misses dominate, and back when hits do', async () => {
    const { state, reads, read } = setup(1);
    for (let v = 1; v <= 20; v++) {
      state.version = String(v);
      expect(await read()).toBe(`a@${v}`);
    }
    state.queries.length = 0;
    await read();
    expect(state.queries).toEqual(['load']);
    for (let i = 0; i < 20; i++) await read();
    state.queries.length = 0;
    await read();
    expect(state.queries).toEqual(['probe']);
    expect(reads.hitRate).toBeGreaterThanOrEqual(0.5);
  });
});
