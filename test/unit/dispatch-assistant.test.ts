import { describe, expect, it } from 'vitest';
import type { RosterMember } from '../../src/domain/run.js';
import { haversineKm, proposeDispatch, type DispatchInput } from '../../src/runs/dispatch-assistant.js';

const loop = { latitude: 41.8781, longitude: -87.6298 };
const ohare = { latitude: 41.9742, longitude: -87.9073 };

function member(overrides: Partial<RosterMember> & Pick<RosterMember, 'id'>): RosterMember {
  return {
    type: 'shop',
    name: overrides.id,
    skills: ['oil_change', 'brake_inspection', 'inspection'],
    latitude: null,
    longitude: null,
    capacity: 3,
    active: true,
    ...overrides,
  };
}

function input(overrides: Partial<DispatchInput>): DispatchInput {
  return { itemTypes: ['oil_change'], location: loop, roster: [], openRunsByAssignee: {}, ...overrides };
}

const chosen = (i: DispatchInput) => proposeDispatch(i)?.assignee.id ?? null;

describe('haversineKm', () => {
  it("Chicago Loop to O'Hare is about 25 km", () => {
    expect(Math.abs(haversineKm(loop, ohare) - 25)).toBeLessThan(0.5);
  });

  it('is symmetric, zero for the same point, and 111.2 km per degree along a meridian', () => {
    expect(haversineKm(ohare, loop)).toBeCloseTo(haversineKm(loop, ohare), 9);
    expect(haversineKm(loop, loop)).toBe(0);
    expect(haversineKm({ latitude: 0, longitude: 0 }, { latitude: 1, longitude: 0 })).toBeCloseTo(111.195, 2);
  });

  it('stays finite for antipodal points', () => {
    expect(haversineKm({ latitude: 0, longitude: 0 }, { latitude: 0, longitude: 180 })).toBeCloseTo(
      Math.PI * 6371.0088,
      3,
    );
  });
});

describe('proposeDispatch', () => {
  it('returns null for an empty roster', () => {
    expect(proposeDispatch(input({ roster: [] }))).toBeNull();
  });

  it('requires every item type among the skills', () => {
    const roster = [
      member({ id: 'oil-only', skills: ['oil_change'], latitude: loop.latitude, longitude: loop.longitude }),
      member({
        id: 'both',
        skills: ['brake_inspection', 'oil_change'],
        latitude: ohare.latitude,
        longitude: ohare.longitude,
      }),
    ];
    expect(chosen(input({ itemTypes: ['oil_change', 'brake_inspection'], roster }))).toBe('both');
    expect(chosen(input({ itemTypes: ['oil_change'], roster }))).toBe('oil-only');
    expect(chosen(input({ itemTypes: ['tire_rotation'], roster }))).toBeNull();
  });

  it('needs no skill for a run without items', () => {
    const roster = [member({ id: 'generalist', skills: [] })];
    expect(proposeDispatch(input({ itemTypes: [], location: null, roster }))).toEqual({
      assignee: { type: 'shop', id: 'generalist', name: 'generalist' },
      reason: 'least loaded (run location unknown): 0 of 3 runs open',
    });
  });

  it('skips members without spare capacity', () => {
    const roster = [
      member({ id: 'full', capacity: 2, latitude: loop.latitude, longitude: loop.longitude }),
      member({ id: 'zero', capacity: 0, latitude: loop.latitude, longitude: loop.longitude }),
      member({ id: 'spare', capacity: 2, latitude: ohare.latitude, longitude: ohare.longitude }),
    ];
    expect(chosen(input({ roster, openRunsByAssignee: { full: 2, spare: 1 } }))).toBe('spare');
    expect(chosen(input({ roster, openRunsByAssignee: { full: 3, spare: 2 } }))).toBeNull();
  });

  it('skips inactive members', () => {
    const roster = [
      member({ id: 'retired', active: false, latitude: loop.latitude, longitude: loop.longitude }),
      member({ id: 'active', latitude: ohare.latitude, longitude: ohare.longitude }),
    ];
    expect(chosen(input({ roster }))).toBe('active');
    expect(chosen(input({ roster: [roster[0]!] }))).toBeNull();
  });

  it('prefers the nearest located member, whatever the load or the roster order', () => {
    const roster = [
      member({ id: 'far', latitude: ohare.latitude, longitude: ohare.longitude }),
      member({ id: 'near', latitude: 41.89, longitude: -87.63 }),
      member({ id: 'middle', latitude: 41.92, longitude: -87.75 }),
    ];
    expect(chosen(input({ roster, openRunsByAssignee: { near: 2 } }))).toBe('near');
    expect(chosen(input({ roster: [...roster].reverse() }))).toBe('near');
  });

  it('ranks members without a location after located ones when the run has a location', () => {
    const roster = [
      member({ id: 'unknown', name: 'Aardvark Auto' }),
      member({ id: 'far', name: 'Zephyr Fleet', latitude: ohare.latitude, longitude: ohare.longitude, capacity: 10 }),
    ];
    expect(proposeDispatch(input({ roster, openRunsByAssignee: { far: 9 } }))).toEqual({
      assignee: { type: 'shop', id: 'far', name: 'Zephyr Fleet' },
      reason: 'nearest with oil_change skill: 25.3 km away, 9 of 10 runs open',
    });
    expect(proposeDispatch(input({ roster: [roster[0]!] }))).toEqual({
      assignee: { type: 'shop', id: 'unknown', name: 'Aardvark Auto' },
      reason: 'least loaded with oil_change skill (no eligible member has a known location): 0 of 3 runs open',
    });
  });

  it('orders by load share when the run location is unknown', () => {
    const roster = [
      member({ id: 'a', name: 'Alpha', capacity: 2, latitude: loop.latitude, longitude: loop.longitude }),
      member({ id: 'b', name: 'Bravo', capacity: 4 }),
    ];
    // Alpha carries 1 of 2 (50%), Bravo 1 of 4 (25%).
    expect(proposeDispatch(input({ location: null, roster, openRunsByAssignee: { a: 1, b: 1 } }))).toEqual({
      assignee: { type: 'shop', id: 'b', name: 'Bravo' },
      reason: 'least loaded with oil_change skill (run location unknown): 1 of 4 runs open',
    });
  });

  it('breaks distance ties by load share, then name, then id', () => {
    const here = { latitude: 41.88, longitude: -87.63 };
    const at = (id: string, name: string, capacity = 4) => member({ id, name, capacity, ...here });
    expect(
      chosen(input({ roster: [at('x', 'Busy', 2), at('y', 'Quiet', 4)], openRunsByAssignee: { x: 1, y: 1 } })),
    ).toBe('y');
    expect(chosen(input({ roster: [at('x', 'Bravo'), at('y', 'Alpha')] }))).toBe('y');
    expect(chosen(input({ roster: [at('m2', 'Same'), at('m1', 'Same')] }))).toBe('m1');
    // 30 m apart is the same place at the 0.1 km resolution: the lower load share wins.
    const nextDoor = member({ id: 'next-door', capacity: 4, latitude: 41.88027, longitude: -87.63 });
    expect(
      chosen(input({ roster: [at('busy', 'Busy', 4), nextDoor], openRunsByAssignee: { busy: 2, 'next-door': 0 } })),
    ).toBe('next-door');
  });

  it('treats a member with only one coordinate as unlocated', () => {
    const roster = [
      member({ id: 'half', latitude: loop.latitude, longitude: null }),
      member({ id: 'located', latitude: ohare.latitude, longitude: ohare.longitude }),
    ];
    expect(chosen(input({ roster }))).toBe('located');
  });

  it('writes the facts into the reason, with item types sorted and de-duplicated', () => {
    const roster = [
      member({ id: 't1', type: 'technician', name: 'Dana Whitfield', latitude: 41.86, longitude: -87.68, capacity: 3 }),
    ];
    const result = proposeDispatch(
      input({ itemTypes: ['oil_change', 'brake_inspection', 'oil_change'], roster, openRunsByAssignee: { t1: 1 } }),
    );
    expect(result).toEqual({
      assignee: { type: 'technician', id: 't1', name: 'Dana Whitfield' },
      reason: 'nearest with brake_inspection, oil_change skills: 4.6 km away, 1 of 3 runs open',
    });
    const single = proposeDispatch(input({ itemTypes: [], roster: [{ ...roster[0]!, capacity: 1 }] }));
    expect(single?.reason).toBe('nearest: 4.6 km away, 0 of 1 run open');
  });

  it('is pure: the input is not reordered', () => {
    const roster = [member({ id: 'b', name: 'B' }), member({ id: 'a', name: 'A' })];
    proposeDispatch(input({ location: null, roster }));
    expect(roster.map((m) => m.id)).toEqual(['b', 'a']);
  });
});
