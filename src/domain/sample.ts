/**
 * The normalized telematics vocabulary every provider adapter produces.
 *
 * Terminology:
 * - sample: one value of one signal of one vehicle at the time the vehicle (not we) recorded it.
 * - reading: a stored sample (table `readings`); repeated samples are stored once.
 * - provider event: a discrete occurrence reported by a provider (harsh braking, crash).
 * - vehicle state: the newest sample of each signal, kept in the vehicle row: its time under
 *   `signals.observed_at`, its value in the read model's `signals` (the odometer series' in
 *   `odometer_values`).
 *
 * Units are in the names and always metric: km, kph, volts, °C, kPa, percent 0–100, hours.
 */
import { msPerDay } from './units.js';

/** A device clock more than a day ahead is wrong (Traccar's `filter.future` default). */
export const maxFutureSkewMs = msPerDay;

export const signalNames = [
  'odometer_km', // ECU/OBD/"true" odometer: the authority for distance
  'gps_odometer_km', // odometer derived from GPS distance (Traccar odometer, Samsara gpsOdometerMeters)
  'fuel_percent',
  'battery_voltage', // 12/24 V system voltage
  'coolant_temp_c',
  'engine_state', // 'off' | 'on' | 'idle'
  'speed_kph',
  'location', // {lat, lon, heading}
  'tire_pressure_kpa', // {front_left, front_right, rear_left, rear_right}
  'oil_life_percent',
  'dtcs', // [{code, system, mil}]
  'check_engine_light', // boolean
  'engine_hours',
  'brake_lining_percent',
] as const;
export type SignalName = (typeof signalNames)[number];

/**
 * The odometer series. They travel with the car: a vehicle's new owner keeps its odometer (the
 * trusted one and its link state), while every other signal is shown and evaluated only from the
 * moment the owner got the vehicle (docs/ownership.md).
 */
export const odometerSignals = ['odometer_km', 'gps_odometer_km'] as const;

export const isOdometerSignal = (signal: string): boolean => (odometerSignals as readonly string[]).includes(signal);

export type EngineState = 'off' | 'on' | 'idle';

export interface Location {
  lat: number;
  lon: number;
  heading: number | null;
  /**
   * The provider's own reverse geocoding of the fix when its payload carries one (Samsara
   * `reverseGeo.formattedLocation`, Motive `description`); never computed here. Instant
   * verification shows it (docs/verification.md).
   */
  address?: string;
}

export interface TirePressureKpa {
  front_left: number | null;
  front_right: number | null;
  rear_left: number | null;
  rear_right: number | null;
}

/** P powertrain, C chassis, B body, U network (OBD-II); j1939 for SPN/FMI codes. */
export type DtcSystem = 'powertrain' | 'chassis' | 'body' | 'network' | 'j1939' | 'unknown';

export interface Dtc {
  code: string;
  system: DtcSystem;
  mil: boolean;
}

/**
 * A sample's value. Known signals have the types above; unknown signal names (kept from the
 * generic format and Traccar attributes) carry whatever JSON value the provider sent.
 */
export type SampleValue =
  number | boolean | string | Location | TirePressureKpa | Dtc[] | Record<string, unknown> | unknown[];

export interface Sample {
  /** The vehicle as the provider names it; mapped to our vehicle by (connection, provider_vehicle_id). */
  providerVehicleId: string;
  /** A SignalName, or an unknown provider key kept under its own (snake_case) name. */
  signal: string;
  recordedAt: Date;
  value: SampleValue;
}

export const providerEventKinds = ['hard_brake', 'hard_accel', 'hard_corner', 'impact', 'airbag_deployment'] as const;
export type ProviderEventKind = (typeof providerEventKinds)[number];

export interface ProviderEvent {
  providerVehicleId: string;
  kind: ProviderEventKind;
  recordedAt: Date;
  /** Peak acceleration in g when the provider gives it. */
  g: number | null;
}

/** The system of an OBD-II code from its first letter; J1939 codes are written SPN<n>-FMI<n>. */
export function dtcSystem(code: string): DtcSystem {
  if (/^SPN\d+-FMI\d+$/.test(code)) return 'j1939';
  switch (code[0]?.toUpperCase()) {
    case 'P':
      return 'powertrain';
    case 'C':
      return 'chassis';
    case 'B':
      return 'body';
    case 'U':
      return 'network';
    default:
      return 'unknown';
  }
}

/** The newest sample of one signal of one vehicle in a payload: what the vehicle state keeps. */
export interface LatestSample {
  vehicleId: string;
  signal: string;
  recordedAt: Date;
  value: unknown;
  source: string;
}

/**
 * Sources a person typed (a manual odometer reading, a service entry) rather than a vehicle
 * reported: they re-baseline the odometer checks and are never proof from a tracker.
 */
export const manualSources: ReadonlySet<string> = new Set(['manual', 'service']);

export function isTelematicsSource(source: string): boolean {
  return !manualSources.has(source);
}

/** A stored provider event (table vehicle_events): harsh braking, acceleration, impact, airbag. */
export interface EventSample {
  kind: ProviderEventKind;
  recordedAt: Date;
  /** Peak acceleration in g, when the provider gives it. */
  g: number | null;
}

/** A sample as the rules see it: one signal value of the vehicle at the time it was recorded. */
export interface RuleSample {
  signal: string;
  recordedAt: Date;
  value: unknown;
  /** Provider name, or `manual` for a hand-entered odometer. */
  source: string;
}
