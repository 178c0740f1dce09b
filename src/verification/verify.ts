/**
 * The instant verification answer (docs/verification.md) as a pure function of the
 * vehicle's read model. Levels nest: basic = odometer and location; standard adds condition;
 * premium adds diagnostics. A section the level does not include is absent (the spec's level
 * contents), and a value the vehicle never reported is null: nothing is invented. The address is
 * the provider's reverse geocoding, else the nearest place within 50 km (docs/places.md), else null;
 * `address_source` says which.
 */
import { defaultHealthConfig } from '../domain/health-config.js';
import { nearestPlace, placeLabel } from '../domain/places.js';
import { isTelematicsSource, type Dtc, type TirePressureKpa } from '../domain/sample.js';
import { kmToMiles, round2 } from '../domain/units.js';
import type { OdometerSignal, VehicleAlert, VehicleRecord } from '../domain/vehicle.js';
import { odometerConfidence, type Confidence } from './confidence.js';

export const verificationLevels = ['basic', 'standard', 'premium'] as const;
export type VerificationLevel = (typeof verificationLevels)[number];

export interface Verification {
  vin: string;
  verification_id: string;
  level: VerificationLevel;
  timestamp: string;
  odometer: {
    value: number | null;
    unit: 'miles';
    confidence: Confidence;
    /** A tracker reported it and the link is healthy (not typed by a person, not stale). */
    verified: boolean;
    timestamp: string | null;
    source: string | null;
  };
  location: {
    latitude: number;
    longitude: number;
    address: string | null;
    /** Where the address came from; null with no address. Additive to the spec. */
    address_source: AddressSource | null;
    timestamp: string | null;
  } | null;
  condition?: {
    battery_voltage: number | null;
    battery_health: 'good' | 'weak' | 'low' | 'unknown';
    fuel_level: number | null;
    check_engine: boolean | null;
    /** The spec's descriptive name for the same lamp (both variants of its `condition` are answered). */
    check_engine_light: boolean | null;
    tire_pressure: 'ok' | 'low' | 'unknown';
    last_maintenance: string | null;
  };
  diagnostics?: {
    health_status: string;
    dtcs: Dtc[];
    tire_pressure_kpa: TirePressureKpa | null;
    engine_hours: number | null;
    oil_life_percent: number | null;
    coolant_temp_c: number | null;
    brake_lining_percent: number | null;
    open_alerts: VehicleAlert[];
  };
}

export const addressSources = ['provider', 'nearest_place'] as const;
export type AddressSource = (typeof addressSources)[number];

export interface VerificationInput {
  vehicle: VehicleRecord;
  level: VerificationLevel;
  verificationId: string;
  /** The latest completed run or service entry. */
  lastMaintenanceAt: Date | null;
  now: Date;
}

function numberSignal(signals: Record<string, unknown>, name: string): number | null {
  const value = signals[name];
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function objectSignal(signals: Record<string, unknown>, name: string): Record<string, unknown> | null {
  const value = signals[name];
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

function odometer(vehicle: VehicleRecord, now: Date): Verification['odometer'] {
  const signal = objectSignal(vehicle.signals, 'odometer') as OdometerSignal | null;
  if (!signal || typeof signal.km !== 'number') {
    return { value: null, unit: 'miles', confidence: 'none', verified: false, timestamp: null, source: null };
  }
  const takenAt = Date.parse(signal.as_of);
  const ageMs = Math.max(0, now.getTime() - takenAt);
  const confidence = odometerConfidence({
    source: signal.source,
    ecu: vehicle.ecuOdometerAt !== null && vehicle.ecuOdometerAt.getTime() >= takenAt,
    linkBroken: vehicle.linkBroken?.reason ?? null,
    ageMs,
  });
  return {
    value: round2(kmToMiles(signal.km)),
    unit: 'miles',
    confidence,
    verified: isTelematicsSource(signal.source) && (confidence === 'high' || confidence === 'medium'),
    timestamp: signal.as_of,
    source: signal.source,
  };
}

function location(vehicle: VehicleRecord): Verification['location'] {
  const signal = objectSignal(vehicle.signals, 'location');
  if (!signal || typeof signal.lat !== 'number' || typeof signal.lon !== 'number') return null;
  const provided = typeof signal.address === 'string' && signal.address.trim() !== '' ? signal.address : null;
  const place = provided === null ? nearestPlace({ lat: signal.lat, lon: signal.lon }) : null;
  return {
    latitude: signal.lat,
    longitude: signal.lon,
    address: provided ?? (place && placeLabel(place)),
    address_source: provided !== null ? 'provider' : place ? 'nearest_place' : null,
    timestamp: typeof signal.as_of === 'string' ? signal.as_of : null,
  };
}

/** Resting-voltage bands of docs/health.md "Sources" (the health rules' defaults, 12 V system). */
function batteryHealth(volts: number | null): NonNullable<Verification['condition']>['battery_health'] {
  if (volts === null) return 'unknown';
  const { nominalVolts, restingLowVolts, restingCriticalVolts } = defaultHealthConfig.battery;
  // A 24 V system reads twice the 12 V thresholds; tell them apart by the reading itself.
  const scale = volts > 18 ? 24 / nominalVolts : 1;
  if (volts >= restingLowVolts * scale) return 'good';
  if (volts >= restingCriticalVolts * scale) return 'weak';
  return 'low';
}

function tirePressure(tires: Record<string, unknown> | null): NonNullable<Verification['condition']>['tire_pressure'] {
  if (!tires) return 'unknown';
  const values = ['front_left', 'front_right', 'rear_left', 'rear_right']
    .map((wheel) => tires[wheel])
    .filter((v): v is number => typeof v === 'number');
  if (values.length === 0) return 'unknown';
  const { placardKpa, warnRatio } = defaultHealthConfig.tires;
  return values.some((kpa) => kpa <= placardKpa * warnRatio) ? 'low' : 'ok';
}

function checkEngine(signals: Record<string, unknown>): boolean | null {
  if (typeof signals.check_engine_light === 'boolean') return signals.check_engine_light;
  const dtcs = signals.dtcs;
  return Array.isArray(dtcs) ? dtcs.some((d) => (d as Dtc).mil === true) : null;
}

function tiresKpa(tires: Record<string, unknown> | null): TirePressureKpa | null {
  if (!tires) return null;
  const wheel = (name: string) => (typeof tires[name] === 'number' ? (tires[name] as number) : null);
  return {
    front_left: wheel('front_left'),
    front_right: wheel('front_right'),
    rear_left: wheel('rear_left'),
    rear_right: wheel('rear_right'),
  };
}

export function buildVerification(input: VerificationInput): Verification {
  const { vehicle, level, now } = input;
  const signals = vehicle.signals;
  const answer: Verification = {
    vin: vehicle.vin ?? '',
    verification_id: input.verificationId,
    level,
    timestamp: now.toISOString(),
    odometer: odometer(vehicle, now),
    location: location(vehicle),
  };
  if (level === 'basic') return answer;
  const volts = numberSignal(signals, 'battery_voltage');
  const tires = objectSignal(signals, 'tire_pressure_kpa');
  const lamp = checkEngine(signals);
  answer.condition = {
    battery_voltage: volts,
    battery_health: batteryHealth(volts),
    fuel_level: numberSignal(signals, 'fuel_percent'),
    check_engine: lamp,
    check_engine_light: lamp,
    tire_pressure: tirePressure(tires),
    last_maintenance: input.lastMaintenanceAt ? input.lastMaintenanceAt.toISOString().slice(0, 10) : null,
  };
  if (level === 'standard') return answer;
  answer.diagnostics = {
    health_status: vehicle.health.status,
    dtcs: Array.isArray(signals.dtcs) ? (signals.dtcs as Dtc[]) : [],
    tire_pressure_kpa: tiresKpa(tires),
    engine_hours: numberSignal(signals, 'engine_hours'),
    oil_life_percent: numberSignal(signals, 'oil_life_percent'),
    coolant_temp_c: numberSignal(signals, 'coolant_temp_c'),
    brake_lining_percent: numberSignal(signals, 'brake_lining_percent'),
    open_alerts: vehicle.health.alerts,
  };
  return answer;
}
