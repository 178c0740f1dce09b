/** The instant verification's confidence table (docs/verification.md) row by row, and its levels. */
import { describe, expect, it } from 'vitest';
import { msPerDay } from '../../../src/domain/units.js';
import type { VehicleRecord } from '../../../src/domain/vehicle.js';
import { odometerConfidence, type OdometerEvidence } from '../../../src/verification/confidence.js';
import { buildVerification } from '../../../src/verification/verify.js';

const hour = 3_600_000;
const evidence = (e: Partial<OdometerEvidence>): OdometerEvidence => ({
  source: 'samsara',
  ecu: true,
  linkBroken: null,
  ageMs: hour,
  ...e,
});

describe('odometer confidence', () => {
  it.each([
    ['1: no odometer', { source: null }, 'none'],
    ['2: conflict, fresh ECU', { linkBroken: 'conflict' as const }, 'low'],
    ['2: conflict, manual', { source: 'manual', ecu: false, linkBroken: 'conflict' as const }, 'low'],
    ['3: over a year old', { source: 'manual', ecu: false, ageMs: 366 * msPerDay }, 'low'],
    ['4: manual, 30 days', { source: 'manual', ecu: false, ageMs: 30 * msPerDay }, 'medium'],
    ['4: service entry, today', { source: 'service', ecu: false }, 'medium'],
    ['4: manual on a silent tracker', { source: 'manual', ecu: false, linkBroken: 'no_reading' as const }, 'medium'],
    ['5: manual, 31 days', { source: 'manual', ecu: false, ageMs: 31 * msPerDay }, 'low'],
    ['6: stale link', { linkBroken: 'stale' as const }, 'low'],
    ['6: 7 days and a minute', { ageMs: 7 * msPerDay + 60_000 }, 'low'],
    ['7: ECU, 24 hours', { ageMs: 24 * hour }, 'high'],
    ['8: ECU, 24 hours and a minute', { ageMs: 24 * hour + 60_000 }, 'medium'],
    ['8: ECU, 7 days', { ageMs: 7 * msPerDay }, 'medium'],
    ['8: GPS-derived, fresh', { ecu: false }, 'medium'],
  ])('row %s → %s', (_row, e, expected) => {
    expect(odometerConfidence(evidence(e))).toBe(expected);
  });

  it('a broken link is never high', () => {
    for (const linkBroken of ['conflict', 'stale', 'no_reading'] as const) {
      for (const source of ['samsara', 'manual', 'service']) {
        for (const ageMs of [0, hour, 2 * msPerDay, 40 * msPerDay]) {
          expect(odometerConfidence({ source, ecu: true, linkBroken, ageMs })).not.toBe('high');
        }
      }
    }
  });
});

const now = new Date('2026-11-15T12:00:00.000Z');
function vehicle(signals: Record<string, unknown>): VehicleRecord {
  return {
    id: 'v',
    companyId: 'c',
    name: 'Van',
    vin: '1HGCM82633A004352',
    licensePlate: null,
    make: 'Ford',
    model: 'Transit',
    year: 2022,
    telematicsProvider: 'samsara',
    providerVehicleId: null,
    providerConnectionId: null,
    homeLocationId: null,
    active: true,
    signals,
    health: { status: 'ok', alerts: [] },
    linkBroken: null,
    asOf: null,
    ecuOdometerAt: null,
    createdAt: now,
    updatedAt: now,
  };
}

describe('levels and condition', () => {
  const input = (signals: Record<string, unknown>, level: 'basic' | 'standard' | 'premium') => ({
    vehicle: vehicle(signals),
    level,
    verificationId: 'id',
    lastMaintenanceAt: new Date('2026-10-01T08:00:00Z'),
    now,
  });

  it('basic has odometer and location only', () => {
    expect(Object.keys(buildVerification(input({}, 'basic')))).not.toContain('condition');
  });

  it("the address is the provider's, else the nearest place within 50 km, else null; address_source says which", () => {
    const at = (location: Record<string, unknown>) =>
      buildVerification(input({ location: { heading: null, as_of: now.toISOString(), ...location } }, 'basic'))
        .location;
    expect(at({ lat: 37.7929, lon: -122.4177, address: 'Hyde Street, San Francisco, CA' })).toMatchObject({
      address: 'Hyde Street, San Francisco, CA',
      address_source: 'provider',
    });
    expect(at({ lat: 41.85, lon: -87.65 })).toEqual({
      latitude: 41.85,
      longitude: -87.65,
      address: 'Chicago, Illinois, US',
      address_source: 'nearest_place',
      timestamp: now.toISOString(),
    });
    // A blank provider address is none.
    expect(at({ lat: 41.85, lon: -87.65, address: '  ' })).toMatchObject({ address_source: 'nearest_place' });
    // The Gulf of Mexico: no place within 50 km.
    expect(at({ lat: 27.5, lon: -90 })).toMatchObject({ address: null, address_source: null });
  });

  it.each([
    [12.7, 'good'],
    [12.2, 'good'],
    [12.0, 'weak'],
    [11.7, 'low'],
    [25.0, 'good'],
    [24.0, 'weak'],
    [23.0, 'low'],
    [null, 'unknown'],
  ])('battery %s V is %s', (volts, health) => {
    const v = buildVerification(input(volts === null ? {} : { battery_voltage: volts }, 'standard'));
    expect(v.condition?.battery_health).toBe(health);
  });

  it('check engine comes from the lamp, else from a MIL-lit DTC, else unknown; check_engine_light says the same', () => {
    const check = (signals: Record<string, unknown>) => {
      const condition = buildVerification(input(signals, 'standard')).condition!;
      expect(condition.check_engine_light).toBe(condition.check_engine);
      return condition.check_engine;
    };
    expect(check({ check_engine_light: true })).toBe(true);
    expect(check({ check_engine_light: false, dtcs: [{ code: 'P0300', system: 'powertrain', mil: true }] })).toBe(
      false,
    );
    expect(check({ dtcs: [{ code: 'P0300', system: 'powertrain', mil: true }] })).toBe(true);
    expect(check({ dtcs: [] })).toBe(false);
    expect(check({})).toBeNull();
  });

  it('last maintenance is a date; premium lists diagnostics with nulls for what was never reported', () => {
    const v = buildVerification(input({ engine_hours: 10 }, 'premium'));
    expect(v.condition?.last_maintenance).toBe('2026-10-01');
    expect(v.diagnostics).toEqual({
      health_status: 'ok',
      dtcs: [],
      tire_pressure_kpa: null,
      engine_hours: 10,
      oil_life_percent: null,
      coolant_temp_c: null,
      brake_lining_percent: null,
      open_alerts: [],
    });
  });
});
