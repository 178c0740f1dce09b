import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { equalsAsStored } from '../../src/domain/stored-json.js';

/** The comparison it replaces: a JSON round trip, then deep equality. */
const roundTrip = (value: unknown, stored: unknown) => isDeepStrictEqual(JSON.parse(JSON.stringify(value)), stored);

describe('equalsAsStored', () => {
  const cases: Array<[string, unknown, unknown]> = [
    [
      'equal documents, keys in another order',
      { a: 1, b: { c: [1, 'x', true, null] } },
      { b: { c: [1, 'x', true, null] }, a: 1 },
    ],
    ['a changed leaf', { a: { b: 1 } }, { a: { b: 2 } }],
    ['an undefined field is absent', { a: 1, b: undefined }, { a: 1 }],
    ['an absent field is not null', { a: 1 }, { a: 1, b: null }],
    ['a null field is not absent', { a: 1, b: null }, { a: 1 }],
    ['an extra stored field', { a: 1 }, { a: 1, b: 2 }],
    ['an undefined array item is null', [1, undefined], [1, null]],
    ['non-finite numbers are null', { a: Number.NaN, b: Infinity }, { a: null, b: null }],
    ['a date is its ISO string', { at: new Date('2026-11-20T11:09:28.395Z') }, { at: '2026-11-20T11:09:28.395Z' }],
    ['a date is not another instant', { at: new Date('2026-11-20T11:09:28.395Z') }, { at: '2026-11-20T11:09:28.396Z' }],
    ['an array is not an object', { a: [] }, { a: {} }],
    ['an object is not an array', { a: {} }, { a: [] }],
    ['arrays of other lengths', [1, 2], [1, 2, 3]],
    ['a number is not its string', { a: 1 }, { a: '1' }],
    ['null against an object', null, {}],
    ['an object against null', {}, null],
    ['negative zero is stored as zero', { a: -0 }, { a: 0 }],
  ];
  it.each(cases)('%s: as a JSON round trip decides', (_name, value, stored) => {
    expect(equalsAsStored(value, stored)).toBe(roundTrip(value, stored));
  });

  it('decides both ways in the cases above', () => {
    const outcomes = new Set(cases.map(([, value, stored]) => equalsAsStored(value, stored)));
    expect(outcomes).toEqual(new Set([true, false]));
  });
});
