import { describe, expect, it } from 'vitest';
import { isoTimestamp } from '../../../src/domain/iso-time.js';

describe('isoTimestamp', () => {
  it('writes what toISOString writes at the edges of days, months, leap years and the four-digit years', () => {
    const edges = [
      '1970-01-01T00:00:00.000Z',
      '1969-12-31T23:59:59.999Z',
      '2000-02-29T12:34:56.789Z',
      '2100-02-28T23:59:59.999Z',
      '2100-03-01T00:00:00.000Z',
      '2024-12-31T23:59:59.999Z',
      '2026-11-26T20:03:19.023Z',
      '1000-01-01T00:00:00.000Z',
      '9999-12-31T23:59:59.999Z',
      '1600-02-29T00:00:00.001Z',
    ];
    for (const edge of edges) expect(isoTimestamp(new Date(edge))).toBe(edge);
  });

  it('falls back to toISOString outside years 1000–9999, and throws as it does for an invalid date', () => {
    for (const date of [new Date('0999-12-31T23:59:59.999Z'), new Date(Date.UTC(10_000, 0, 1)), new Date(-8.64e15)]) {
      expect(isoTimestamp(date)).toBe(date.toISOString());
    }
    expect(() => isoTimestamp(new Date(Number.NaN))).toThrow(RangeError);
  });

  it('agrees with toISOString over every hour of four years and a spread of times across the range', () => {
    const hour = 3_600_000;
    for (let time = Date.UTC(2023, 0, 1); time < Date.UTC(2027, 0, 1); time += hour + 7) {
      expect(isoTimestamp(new Date(time))).toBe(new Date(time).toISOString());
    }
    const first = Date.UTC(1000, 0, 1);
    const span = Date.UTC(9999, 11, 31) - first;
    for (let i = 0; i < 10_000; i++) {
      const date = new Date(first + Math.floor((span * i) / 10_000) + i * 997);
      expect(isoTimestamp(date)).toBe(date.toISOString());
    }
  });
});
