/**
 * Checks every adapter applies to normalized values, so range rules live in one place: a value
 * outside physical bounds is skipped (and counted), never stored.
 */
import {
  dtcSystem,
  type Dtc,
  type Location,
  type Sample,
  type SampleValue,
  type TirePressureKpa,
} from '../src/domain/sample.js';

export function finiteNumber(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
  return null;
}

/** Rounds a converted value to 6 decimals so float noise (×1.609344, ×100) does not leak into readings. */
function round6(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}

/**
 * A numeric field times `factor`: undefined for null/absent (skipped silently), the raw value when
 * it is not a number (so the range check records why), else the converted number.
 */
export function scaled(value: unknown, factor: number): unknown {
  if (value === null || value === undefined) return undefined;
  const n = finiteNumber(value);
  return n === null ? value : round6(n * factor);
}

/** ISO 8601 text, or epoch seconds / milliseconds as a number or digit string. */
export function parseTime(value: unknown): Date | null {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value;
  if (typeof value === 'number' || (typeof value === 'string' && /^\d+(\.\d+)?$/.test(value))) {
    const n = Number(value);
    // Epoch seconds until year 5138; anything larger is milliseconds.
    const date = new Date(n < 1e11 ? n * 1000 : n);
    return Number.isFinite(date.getTime()) ? date : null;
  }
  if (typeof value === 'string') {
    const date = new Date(value);
    return Number.isNaN(date.getTime()) ? null : date;
  }
  return null;
}

const ranges: Record<string, [number, number]> = {
  odometer_km: [0, 10_000_000],
  gps_odometer_km: [0, 10_000_000],
  fuel_percent: [0, 100],
  battery_voltage: [0, 60],
  coolant_temp_c: [-60, 200],
  speed_kph: [0, 400],
  oil_life_percent: [0, 100],
  engine_hours: [0, 1_000_000],
  brake_lining_percent: [0, 100],
};

export type Checked = { ok: true; value: SampleValue } | { ok: false; reason: string };

/** A provider's place description is a line of an address; longer is not one. */
const maxAddressLength = 200;

function location(value: Record<string, unknown>): Checked {
  const lat = finiteNumber(value.lat);
  const lon = finiteNumber(value.lon);
  if (lat === null || lon === null || Math.abs(lat) > 90 || Math.abs(lon) > 180)
    return { ok: false, reason: 'location out of range' };
  // A first fix at exactly 0,0 is a device that has no fix yet (traccar/traccar#3673: such a fix put
  // 7,000 miles on a new tracker).
  if (lat === 0 && lon === 0) return { ok: false, reason: 'location 0,0 is no fix' };
  const heading = finiteNumber(value.heading);
  // Wrap only headings outside [0, 360): the modulo would add float noise to 12.9.
  const wrapped = heading === null ? null : heading >= 0 && heading < 360 ? heading : ((heading % 360) + 360) % 360;
  const result: Location = { lat, lon, heading: wrapped };
  const address = typeof value.address === 'string' ? value.address.trim().slice(0, maxAddressLength) : '';
  if (address !== '') result.address = address;
  return { ok: true, value: result };
}

function tires(value: Record<string, unknown>): Checked {
  const result: TirePressureKpa = { front_left: null, front_right: null, rear_left: null, rear_right: null };
  let any = false;
  for (const key of Object.keys(result) as Array<keyof TirePressureKpa>) {
    const kpa = finiteNumber(value[key]);
    if (kpa !== null && kpa >= 0 && kpa <= 2000) {
      result[key] = kpa;
      any = true;
    }
  }
  return any ? { ok: true, value: result } : { ok: false, reason: 'no valid tire pressure' };
}

function dtcs(value: unknown[]): Checked {
  const result: Dtc[] = [];
  for (const entry of value) {
    const raw = typeof entry === 'string' ? { code: entry } : (entry as Record<string, unknown> | null);
    const code = typeof raw?.code === 'string' ? raw.code.trim().toUpperCase() : '';
    if (!code) continue;
    result.push({ code, system: dtcSystem(code), mil: raw?.mil === true });
  }
  return { ok: true, value: result };
}

/** The normalized value of a known signal after range and shape checks; unknown signals pass as they are. */
export function checkSignal(signal: string, value: unknown): Checked {
  if (value === null || value === undefined) return { ok: false, reason: `${signal} is empty` };
  const range = ranges[signal];
  if (range) {
    const n = finiteNumber(value);
    if (n === null) return { ok: false, reason: `${signal} is not a number` };
    if (n < range[0] || n > range[1]) return { ok: false, reason: `${signal} ${n} out of range` };
    return { ok: true, value: n };
  }
  switch (signal) {
    case 'engine_state':
      return value === 'off' || value === 'on' || value === 'idle'
        ? { ok: true, value }
        : { ok: false, reason: `engine_state ${String(value)} unknown` };
    case 'check_engine_light':
      return typeof value === 'boolean'
        ? { ok: true, value }
        : { ok: false, reason: 'check_engine_light is not a boolean' };
    case 'location':
      return typeof value === 'object'
        ? location(value as Record<string, unknown>)
        : { ok: false, reason: 'location is not an object' };
    case 'tire_pressure_kpa':
      return typeof value === 'object'
        ? tires(value as Record<string, unknown>)
        : { ok: false, reason: 'tire_pressure_kpa is not an object' };
    case 'dtcs':
      return Array.isArray(value) ? dtcs(value) : { ok: false, reason: 'dtcs is not an array' };
    default:
      return { ok: true, value: value as SampleValue };
  }
}

/**
 * Collects samples for one payload: `add` checks each value and records a skip with its reason
 * instead of throwing, so one bad field never loses the rest of the payload.
 */
export class SampleCollector {
  readonly samples: Sample[] = [];
  readonly skipped: Array<{ reason: string }> = [];

  add(providerVehicleId: string, signal: string, recordedAt: Date | null, value: unknown): void {
    if (value === undefined) return;
    if (!recordedAt) {
      this.skipped.push({ reason: `${signal} has no valid time` });
      return;
    }
    const checked = checkSignal(signal, value);
    if (checked.ok) this.samples.push({ providerVehicleId, signal, recordedAt, value: checked.value });
    else this.skipped.push({ reason: checked.reason });
  }

  skip(reason: string): void {
    this.skipped.push({ reason });
  }
}

/** Parses JSON text without throwing. */
export function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
