import { describe, expect, it } from 'vitest';
import type { AlertSeverity, LinkBroken } from '../../../src/domain/vehicle.js';
import { rollUpHealth } from '../../../src/health/roll-up.js';
import type { ActiveAlert } from '../../../src/domain/health.js';

function alert(severity: AlertSeverity, type = 'oil_change'): ActiveAlert {
  return { key: type, severity, type, display_name: type, due_date: null, due_miles_remaining: null };
}

const noReading: LinkBroken = { reason: 'no_reading', since: null, tracker_km: null };
const stale: LinkBroken = { reason: 'stale', since: '2026-11-01T08:00:00.000Z', tracker_km: null };
const conflict: LinkBroken = { reason: 'conflict', since: '2026-11-01T08:00:00.000Z', tracker_km: 9_000 };

const safetyTypes = [
  'brake_wear_detected',
  'brake_inspection',
  'tire_pressure_low',
  'airbag_warning',
  'abs_warning',
  'coolant_temperature_high',
];

describe('rollUpHealth', () => {
  it('ok: telemetry, a healthy link and no alerts, or only info alerts', () => {
    expect(rollUpHealth([], null, true)).toBe('ok');
    expect(rollUpHealth([alert('info'), alert('info', 'tire_pressure_low')], null, true)).toBe('ok');
  });

  it('critical: any critical alert, whatever else holds', () => {
    expect(rollUpHealth([alert('critical', 'hard_impact')], null, true)).toBe('critical');
    expect(rollUpHealth([alert('low'), alert('critical', 'check_engine_light')], conflict, true)).toBe('critical');
    expect(rollUpHealth([alert('critical')], noReading, false)).toBe('critical');
  });

  it('critical: a high alert of a safety type', () => {
    for (const type of safetyTypes) expect(rollUpHealth([alert('high', type)], null, true), type).toBe('critical');
  });

  it('needs_attention: a high alert of another type, or a medium or low alert of a safety type', () => {
    expect(rollUpHealth([alert('high', 'check_engine_light')], null, true)).toBe('needs_attention');
    expect(rollUpHealth([alert('high', 'oil_change')], null, true)).toBe('needs_attention');
    expect(rollUpHealth([alert('medium', 'brake_inspection')], null, true)).toBe('needs_attention');
    expect(rollUpHealth([alert('low', 'tire_pressure_low')], null, true)).toBe('needs_attention');
  });

  it('needs_attention: a stale or conflicting link, even without alerts', () => {
    expect(rollUpHealth([], stale, true)).toBe('needs_attention');
    expect(rollUpHealth([], conflict, true)).toBe('needs_attention');
    expect(rollUpHealth([alert('info')], stale, true)).toBe('needs_attention');
    // The link outranks unknown: the telemetry flag does not hide a broken link.
    expect(rollUpHealth([], conflict, false)).toBe('needs_attention');
  });

  it('needs_attention outranks unknown: a known problem is shown even without readings', () => {
    expect(rollUpHealth([alert('low')], noReading, true)).toBe('needs_attention');
    expect(rollUpHealth([alert('medium')], null, false)).toBe('needs_attention');
  });

  it('unknown: no tracker odometer or no telemetry, and no alert above info', () => {
    expect(rollUpHealth([], noReading, true)).toBe('unknown');
    expect(rollUpHealth([], null, false)).toBe('unknown');
    expect(rollUpHealth([alert('info')], noReading, false)).toBe('unknown');
  });
});
