import { describe, expect, it } from 'vitest';
import type { VehicleRecord } from '../../../src/domain/vehicle.js';
import { presentedVehicles, VehicleJsonCache } from '../../../src/api/vehicle-json-cache.js';

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
