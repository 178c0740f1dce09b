/**
 * The simulated fleet: a deterministic generator of the simulator provider's pushes
 * (providers/simulator.ts) for the demo, tests and benchmarks.
 *
 * The generator (`createSimulatedFleet`) keeps one small state record per vehicle and advances it
 * in sub-steps of at most 30 simulated seconds; nothing accumulates between ticks. Every random
 * draw comes from a per-vehicle mulberry32 stream derived from the seed, so the same seed and the
 * same calls give identical output (never Math.random, never the clock).
 *
 * Behaviour, per vehicle: daily shifts (most start 06:00–09:30 local time, some 15:00–22:00),
 * trips of urban, arterial and highway segments with traffic stops, delivery stops with the
 * engine off, idling episodes (some over 10 minutes), refuels when low, charging/resting battery
 * voltages, coolant warm-up, tire pressures near the placard (warming while driving), engine
 * hours, oil life, brake lining, DTCs that appear and clear (engine, ABS, airbag, transmission),
 * harsh events, and collisions (the hardest deploy the airbags). Values follow
 * docs/health.md "Sources": parked 12.3–12.7 V, running 13.6–14.4 V, coolant 85–95 °C, harsh
 * events 0.35–0.6 g, impacts 2–3 g.
 *
 * Special vehicles (ids in `specialVehicles`): `stale` stops reporting after `staleAfterSeconds`;
 * `conflict`'s tracker odometer jumps back by `conflictJumpKm` at `conflictAfterSeconds` and
 * keeps counting from the lower base; `weakBattery` rests near 12.35 V and drains below 11.8 V
 * when parked for hours; `overheating` sometimes runs above 105 °C (with P0217);
 * `slowLeak` loses about 2 kPa an hour from its rear-left tire until topped up.
 * With fewer than six vehicles some roles share a vehicle.
 */
import { distanceM } from '../src/domain/geo.js';
import type { EngineState, Location, TirePressureKpa } from '../src/domain/sample.js';
import { checkDigitOf } from '../src/domain/vin.js';

// ---------------------------------------------------------------------------------------------
// Public generator types

export interface SimulatedVehicle {
  providerVehicleId: string;
  name: string;
  vin: string;
  make: string;
  model: string;
  year: number;
}

export type SimulatedEventType = 'hard_brake' | 'hard_accel' | 'impact' | 'airbag_deployment';

/** The generic-format `signals` of one reading. OBD values (coolant, tires, DTCs) are sent only while the engine runs. */
export interface SimulatedSignals {
  odometer_km: number;
  fuel_percent: number;
  battery_voltage: number;
  engine_state: EngineState;
  speed_kph: number;
  location: Location;
  engine_hours: number;
  oil_life_percent: number;
  coolant_temp_c?: number;
  tire_pressure_kpa?: TirePressureKpa;
  brake_lining_percent?: number;
  dtcs?: Array<{ code: string; mil: boolean }>;
  check_engine_light?: boolean;
  events?: Array<{ type: SimulatedEventType; g: number }>;
}

export interface SimulatedReading {
  vehicle: string;
  ts: string;
  signals: SimulatedSignals;
}

export interface SimulatedTick {
  at: Date;
  payload: { readings: SimulatedReading[] };
}

export interface SimulatedFleetOptions {
  seed: number;
  vehicleCount: number;
  start: Date;
  /** Provider vehicle ids are `${idPrefix}-001`…; default `sim`. */
  idPrefix?: string;
  /** The stale vehicle's last report is at start + this; default 7200 (2 h). */
  staleAfterSeconds?: number;
  /** The conflict vehicle's odometer jumps back from start + this on; default 3600 (1 h). */
  conflictAfterSeconds?: number;
  /** How far back it jumps; default 5000 km. */
  conflictJumpKm?: number;
}

export interface SpecialVehicles {
  stale: string;
  conflict: string;
  weakBattery: string;
  overheating: string;
  slowLeak: string;
}

export interface SimulatedFleet {
  readonly vehicles: SimulatedVehicle[];
  readonly specialVehicles: SpecialVehicles;
  /** The stale vehicle reports at times ≤ staleAt and never after. */
  readonly staleAt: Date;
  /** The conflict vehicle reports the lowered odometer at times ≥ conflictAt. */
  readonly conflictAt: Date;
  /** The current simulated time (start before the first tick). */
  readonly now: Date;
  /** Advances simulated time by stepSeconds (> 0) and returns one reading per reporting vehicle at the new time. */
  tick(stepSeconds: number): SimulatedTick;
}

/** `count` consecutive ticks, for benchmarks and bulk loads. */
export function* simulatedPayloads(
  fleet: SimulatedFleet,
  count: number,
  stepSeconds: number,
): Generator<SimulatedTick, void, undefined> {
  for (let i = 0; i < count; i++) yield fleet.tick(stepSeconds);
}

// ---------------------------------------------------------------------------------------------
// Seeded randomness

/** Mixes a seed and a stream number into a 32-bit seed (murmur3 finalizer). */
function mixSeed(seed: number, stream: number): number {
  let h = (Math.imul(seed >>> 0, 0x9e3779b1) ^ Math.imul(stream + 0x632be5ab, 0x85ebca77)) >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** mulberry32: a tiny, fast PRNG with a 32-bit state. */
class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  between(min: number, max: number): number {
    return min + (max - min) * this.next();
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** Roughly bell-shaped noise in [-scale, scale]. */
  noise(scale: number): number {
    return ((this.next() + this.next() + this.next() - 1.5) / 1.5) * scale;
  }
}

// ---------------------------------------------------------------------------------------------
// Catalog: makes and models with real WMIs, tank sizes and consumption

interface ModelSpec {
  make: string;
  model: string;
  wmi: string;
  tankLiters: number;
  litersPer100Km: number;
  idleLitersPerHour: number;
  placardKpa: number;
}

const catalog: readonly ModelSpec[] = [
  {
    make: 'Ford',
    model: 'Transit 250',
    wmi: '1FT',
    tankLiters: 95,
    litersPer100Km: 13.5,
    idleLitersPerHour: 1.1,
    placardKpa: 240,
  },
  {
    make: 'Ram',
    model: 'ProMaster 2500',
    wmi: '3C6',
    tankLiters: 91,
    litersPer100Km: 14,
    idleLitersPerHour: 1.2,
    placardKpa: 245,
  },
  {
    make: 'Chevrolet',
    model: 'Express 2500',
    wmi: '1GC',
    tankLiters: 117,
    litersPer100Km: 16,
    idleLitersPerHour: 1.4,
    placardKpa: 250,
  },
  {
    make: 'Mercedes-Benz',
    model: 'Sprinter 2500',
    wmi: 'W1Y',
    tankLiters: 93,
    litersPer100Km: 11.5,
    idleLitersPerHour: 0.9,
    placardKpa: 240,
  },
  {
    make: 'Toyota',
    model: 'Tacoma',
    wmi: '3TM',
    tankLiters: 80,
    litersPer100Km: 11.2,
    idleLitersPerHour: 0.9,
    placardKpa: 230,
  },
  {
    make: 'Ford',
    model: 'F-150',
    wmi: '1FT',
    tankLiters: 98,
    litersPer100Km: 13,
    idleLitersPerHour: 1.2,
    placardKpa: 240,
  },
  {
    make: 'Nissan',
    model: 'NV200',
    wmi: '3N6',
    tankLiters: 55,
    litersPer100Km: 9,
    idleLitersPerHour: 0.7,
    placardKpa: 235,
  },
  {
    make: 'Ford',
    model: 'Transit Connect',
    wmi: 'NM0',
    tankLiters: 60,
    litersPer100Km: 9.5,
    idleLitersPerHour: 0.7,
    placardKpa: 240,
  },
];

/** Depot cities with their standard-time UTC offset (hours). */
const bases: ReadonlyArray<{ lat: number; lon: number; utcOffset: number }> = [
  { lat: 41.8781, lon: -87.6298, utcOffset: -6 }, // Chicago
  { lat: 32.7767, lon: -96.797, utcOffset: -6 }, // Dallas
  { lat: 33.749, lon: -84.388, utcOffset: -5 }, // Atlanta
  { lat: 39.7392, lon: -104.9903, utcOffset: -7 }, // Denver
  { lat: 39.9612, lon: -82.9988, utcOffset: -5 }, // Columbus
  { lat: 47.6062, lon: -122.3321, utcOffset: -8 }, // Seattle
];

const dtcPool: ReadonlyArray<{ code: string; mil: boolean }> = [
  { code: 'P0420', mil: true }, // catalyst efficiency below threshold
  { code: 'P0171', mil: true }, // system too lean, bank 1
  { code: 'P0300', mil: true }, // random misfire
  { code: 'P0128', mil: true }, // coolant below thermostat temperature
  { code: 'P0442', mil: true }, // EVAP small leak
  { code: 'P0507', mil: false }, // idle rpm higher than expected
  { code: 'C0035', mil: false }, // left front wheel speed sensor
  { code: 'U0100', mil: false }, // lost communication with ECM
  { code: 'B0001', mil: false }, // driver frontal stage 1 deployment control (airbag warning)
  { code: 'P0700', mil: true }, // transmission control system malfunction
];

/**
 * Brake lining wears 1 % per 100 km and the pads are replaced at 10 % (back to 100 %): a short
 * life, about 9,000 km, so the demo's brake-wear alerts come now and then. Derived from the
 * odometer, so it costs no random draw.
 */
const brakeKmPerPercent = 100;
function brakeLiningPercent(odometerKm: number): number {
  return round(100 - ((odometerKm / brakeKmPerPercent) % 90), 1);
}

// ---------------------------------------------------------------------------------------------
// VINs: WMI + VDS + check digit (ISO 3779 / 49 CFR 565, src/domain/vin.ts) + model year + plant + serial

const vinAlphabet = [...'ABCDEFGHJKLMNPRSTUVWXYZ0123456789'];
/** Model-year codes from 2010 (A) on; I, O, Q, U, Z and 0 are never used. */
const yearCodes = 'ABCDEFGHJKLMNPRSTVWXY';

function makeVin(rng: Rng, wmi: string, year: number): string {
  let vds = '';
  for (let i = 0; i < 5; i++) vds += rng.pick(vinAlphabet);
  const plant = rng.pick(vinAlphabet);
  const serial = String(Math.floor(rng.between(100_000, 1_000_000))).padStart(6, '0');
  const draft = `${wmi}${vds}0${yearCodes[year - 2010]}${plant}${serial}`;
  return `${draft.slice(0, 8)}${checkDigitOf(draft)}${draft.slice(9)}`;
}

// ---------------------------------------------------------------------------------------------
// Vehicle state

type Phase = 'off_shift' | 'parked' | 'idling' | 'driving';

const HOUR = 3600;
const DAY_MS = 86_400_000;
const KM_PER_DEGREE = 111.195;
const MAX_SUBSTEP_SECONDS = 30;

const round = (value: number, digits: number): number => {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
};
const clamp = (value: number, min: number, max: number): number => Math.min(max, Math.max(min, value));
const rad = (deg: number): number => (deg * Math.PI) / 180;

function bearingDeg(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const y = Math.sin(rad(lon2 - lon1)) * Math.cos(rad(lat2));
  const x =
    Math.cos(rad(lat1)) * Math.sin(rad(lat2)) - Math.sin(rad(lat1)) * Math.cos(rad(lat2)) * Math.cos(rad(lon2 - lon1));
  return ((Math.atan2(y, x) * 180) / Math.PI + 360) % 360;
}

interface Roles {
  stale: boolean;
  conflict: boolean;
  weakBattery: boolean;
  overheating: boolean;
  slowLeak: boolean;
}

class VehicleSim {
  readonly rng: Rng;
  readonly id: string;
  private readonly seed: number;
  private readonly spec: ModelSpec;
  private readonly roles: Roles;
  private readonly homeLat: number;
  private readonly homeLon: number;
  private readonly utcOffset: number;
  private readonly shiftStartHour: number;
  private readonly shiftHours: number;
  private readonly aggressiveness: number;
  private readonly chargeVolts: number;
  private readonly restVolts: number;
  private readonly drainVoltsPerHour: number;
  private readonly floorVolts: number;
  private readonly warmCoolant: number;
  private readonly ambientBase: number;
  private readonly consumption: number;

  private phase: Phase = 'off_shift';
  private phaseLeft = 0;
  private shiftEnd = 0;
  private nextShift = 0;
  private speed = 0;
  private target = 0;
  private segmentLeft = 0;
  private stopLeft = 0;
  private afterTrip: 'refuel' | 'impact' | null = null;
  private lat: number;
  private lon: number;
  private heading: number;
  private odometerKm: number;
  private fuelLiters: number;
  private batteryVolts: number;
  private coolant: number;
  private readonly coldTires: [number, number, number, number];
  private tireWarmth = 0;
  private engineHours: number;
  private oilLife: number;
  private dtcs: Array<{ code: string; mil: boolean; left: number }> = [];
  private overheatIn: number | null = null;
  private overheatLeft = 0;
  private events: Array<{ type: SimulatedEventType; g: number }> = [];

  constructor(
    seed: number,
    id: string,
    spec: ModelSpec,
    roles: Roles,
    base: { lat: number; lon: number; utcOffset: number },
    startMs: number,
    conflictJumpKm: number,
  ) {
    this.seed = seed;
    this.rng = new Rng(seed);
    const rng = this.rng;
    this.id = id;
    this.spec = spec;
    this.roles = roles;
    this.utcOffset = base.utcOffset;
    // A depot within ~8 km of the city centre; the vehicle starts within ~12 km of it.
    this.homeLat = base.lat + rng.noise(8) / KM_PER_DEGREE;
    this.homeLon = base.lon + rng.noise(8) / (KM_PER_DEGREE * Math.cos(rad(base.lat)));
    this.lat = this.homeLat + rng.noise(12) / KM_PER_DEGREE;
    this.lon = this.homeLon + rng.noise(12) / (KM_PER_DEGREE * Math.cos(rad(this.homeLat)));
    this.heading = rng.between(0, 360);
    this.shiftStartHour = rng.chance(0.7) ? rng.between(6, 9.5) : rng.between(15, 22);
    this.shiftHours = rng.between(8, 11);
    this.aggressiveness = rng.between(0.5, 2);
    this.chargeVolts = rng.between(13.8, 14.3);
    this.restVolts = roles.weakBattery ? 12.35 : rng.between(12.55, 12.72);
    // Parasitic drain: a healthy battery loses about 0.01 V an hour; the weak one ~0.09 V.
    this.drainVoltsPerHour = roles.weakBattery ? 0.09 : rng.between(0.006, 0.012);
    this.floorVolts = roles.weakBattery ? 11.3 : 12.3;
    this.warmCoolant = rng.between(86, 93);
    this.ambientBase = rng.between(8, 24);
    this.consumption = spec.litersPer100Km * rng.between(0.92, 1.1);
    this.odometerKm = roles.conflict
      ? rng.between(conflictJumpKm + 30_000, conflictJumpKm + 120_000)
      : rng.between(12_000, 180_000);
    this.engineHours = (this.odometerKm / rng.between(32, 45)) * rng.between(0.95, 1.05);
    this.oilLife = rng.between(15, 95);
    this.fuelLiters = spec.tankLiters * rng.between(0.2, 0.95);
    this.coldTires = [0, 1, 2, 3].map(() => spec.placardKpa + rng.noise(6)) as [number, number, number, number];
    if (roles.slowLeak) this.coldTires[2] = spec.placardKpa * rng.between(0.85, 0.95);
    this.coolant = this.ambient(startMs);
    this.batteryVolts = this.restVolts;

    const shift = this.shiftAround(startMs);
    if (shift.start <= startMs) {
      this.shiftEnd = shift.end;
      this.nextShift = this.shiftAround(shift.end).start;
      if (rng.chance(0.6)) {
        this.startTrip();
        this.phaseLeft = rng.between(60, this.phaseLeft);
        this.speed = this.target;
        this.coolant = this.warmCoolant;
        this.batteryVolts = this.chargeVolts;
        this.tireWarmth = 0.8;
      } else {
        this.park(rng.between(120, 1800));
        this.coolant = rng.between(40, 80);
      }
    } else {
      this.phase = 'off_shift';
      this.nextShift = shift.start;
      this.batteryVolts = Math.max(this.floorVolts, this.restVolts - this.drainVoltsPerHour * rng.between(0, 10));
    }
  }

  // -- time of day ----------------------------------------------------------------------------

  /** Ambient °C with a daily swing of ±5 °C peaking mid-afternoon local time. */
  private ambient(ms: number): number {
    const localHour = (((ms / 3_600_000 + this.utcOffset) % 24) + 24) % 24;
    return this.ambientBase + 5 * Math.sin((2 * Math.PI * (localHour - 9)) / 24);
  }

  /** The shift that contains `ms`, or the next one. Each day's start jitters by ±20 minutes, from a hash (no draw). */
  private shiftAround(ms: number): { start: number; end: number } {
    const offsetMs = this.utcOffset * 3_600_000;
    const day = Math.floor((ms + offsetMs) / DAY_MS);
    for (let d = day - 1; d <= day + 1; d++) {
      const jitter = (mixSeed(this.seed, d) / 4294967296 - 0.5) * 40 * 60_000;
      const start = d * DAY_MS - offsetMs + this.shiftStartHour * 3_600_000 + jitter;
      const end = start + this.shiftHours * 3_600_000;
      if (end > ms) return { start, end };
    }
    return { start: ms, end: ms + this.shiftHours * 3_600_000 };
  }

  // -- transitions ----------------------------------------------------------------------------

  private engineOff(): void {
    this.speed = 0;
    this.stopLeft = 0;
    this.batteryVolts = this.restVolts + this.rng.noise(0.02);
    this.overheatIn = null;
    this.overheatLeft = 0;
  }

  /** Alternator charging from the moment the engine starts. */
  private engineOn(): void {
    if (!this.engineRunning()) this.batteryVolts = clamp(this.chargeVolts + this.rng.noise(0.08), 13.6, 14.4);
  }

  private park(seconds: number): void {
    if (this.phase === 'driving' || this.phase === 'idling') this.engineOff();
    this.phase = 'parked';
    this.phaseLeft = seconds;
  }

  private idle(seconds: number): void {
    this.engineOn();
    this.phase = 'idling';
    this.phaseLeft = seconds;
    this.speed = 0;
    this.stopLeft = 0;
  }

  private goOffShift(nowMs: number): void {
    if (this.phase === 'driving' || this.phase === 'idling') this.engineOff();
    this.phase = 'off_shift';
    // Called once the shift is over (nowMs ≥ shiftEnd), so this is the next day's shift.
    this.nextShift = this.shiftAround(nowMs).start;
  }

  private startShift(nowMs: number): void {
    const shift = this.shiftAround(nowMs);
    this.shiftEnd = shift.end;
    // The driver tops up a visibly soft tire before leaving.
    for (let i = 0; i < 4; i++)
      if (this.coldTires[i]! < this.spec.placardKpa * 0.62)
        this.coldTires[i] = this.spec.placardKpa + this.rng.noise(3);
    this.idle(this.rng.between(60, 240)); // warm-up
  }

  private newSegment(): void {
    const r = this.rng.next();
    // Urban streets, arterials, highway.
    this.target = r < 0.6 ? this.rng.between(25, 60) : r < 0.85 ? this.rng.between(60, 85) : this.rng.between(90, 115);
    this.segmentLeft = this.rng.between(120, 900);
  }

  private startTrip(): void {
    this.engineOn();
    this.phase = 'driving';
    this.phaseLeft = this.rng.between(8 * 60, 45 * 60);
    this.afterTrip = null;
    this.newSegment();
    if (this.roles.overheating && this.rng.chance(0.35)) {
      this.overheatIn = this.rng.between(5 * 60, 20 * 60);
      this.overheatLeft = this.rng.between(6 * 60, 14 * 60);
    }
  }

  private endTrip(nowMs: number): void {
    const fuelPercent = (this.fuelLiters / this.spec.tankLiters) * 100;
    if (this.afterTrip === 'impact') {
      this.park(this.rng.between(30 * 60, 75 * 60));
    } else if (this.afterTrip === 'refuel' || fuelPercent < 20) {
      this.park(this.rng.between(6 * 60, 12 * 60));
      this.fuelLiters = this.spec.tankLiters * this.rng.between(0.95, 1);
    } else if (nowMs >= this.shiftEnd) {
      this.goOffShift(nowMs);
    } else {
      const r = this.rng.next();
      if (r < 0.55)
        this.park(this.rng.between(4 * 60, 40 * 60)); // delivery, engine off
      else if (r < 0.85) this.idle(this.rng.between(2 * 60, 9 * 60));
      else this.idle(this.rng.between(10.5 * 60, 28 * 60)); // excessive idling
    }
    this.afterTrip = null;
  }

  // -- physics per sub-step -------------------------------------------------------------------

  private engineRunning(): boolean {
    return this.phase === 'driving' || this.phase === 'idling';
  }

  private updateEngine(dt: number, idling: boolean): void {
    this.engineHours += dt / HOUR;
    this.batteryVolts = clamp(this.chargeVolts - (idling ? 0.1 : 0) + this.rng.noise(0.08), 13.6, 14.4);
    let target = this.warmCoolant;
    if (this.overheatIn !== null && this.phase === 'driving') {
      if (this.overheatIn > 0) this.overheatIn -= dt;
      else if (this.overheatLeft > 0) {
        this.overheatLeft -= dt;
        target = 114;
      } else this.overheatIn = null;
    }
    // First-order warm-up (τ 5 min); an overheating engine climbs faster (τ 3 min).
    const tau = target > this.warmCoolant ? 180 : 300;
    this.coolant += (target - this.coolant) * (1 - Math.exp(-dt / tau));
    if (this.coolant > 108 && !this.dtcs.some((d) => d.code === 'P0217'))
      this.dtcs.push({ code: 'P0217', mil: true, left: this.rng.between(1.5 * HOUR, 4 * HOUR) });
    // DTCs: about one every 33 engine hours; each clears after 1.5–8 engine hours.
    for (const dtc of this.dtcs) dtc.left -= dt;
    if (this.dtcs.some((d) => d.left <= 0)) this.dtcs = this.dtcs.filter((d) => d.left > 0);
    if (this.rng.chance((0.03 * dt) / HOUR)) {
      const dtc = this.rng.pick(dtcPool);
      if (!this.dtcs.some((d) => d.code === dtc.code))
        this.dtcs.push({ ...dtc, left: this.rng.between(1.5 * HOUR, 8 * HOUR) });
    }
    if (idling) {
      this.fuelLiters -= (this.spec.idleLitersPerHour * dt) / HOUR;
      this.tireWarmth *= Math.exp(-dt / HOUR);
    } else this.tireWarmth += (1 - this.tireWarmth) * (1 - Math.exp(-dt / 900)); // rolling tires warm up in ~15 min
  }

  private updateParked(dt: number, nowMs: number): void {
    this.batteryVolts = Math.max(this.floorVolts, this.batteryVolts - (this.drainVoltsPerHour * dt) / HOUR);
    const ambient = this.ambient(nowMs);
    this.coolant += (ambient - this.coolant) * (1 - Math.exp(-dt / 2400));
    this.tireWarmth *= Math.exp(-dt / 3600);
  }

  private move(km: number): void {
    const h = rad(this.heading);
    this.lat += (km * Math.cos(h)) / KM_PER_DEGREE;
    this.lon += (km * Math.sin(h)) / (KM_PER_DEGREE * Math.cos(rad(this.lat)));
    this.odometerKm += km;
    this.oilLife = Math.max(0, this.oilLife - (km / 12_000) * 100);
    this.fuelLiters -= (km * this.consumption) / 100;
  }

  private drive(dt: number): void {
    const rng = this.rng;
    if (this.stopLeft > 0) {
      // Waiting at a light or in a jam: engine idling, not moving.
      this.stopLeft -= dt;
      this.speed = 0;
      this.updateEngine(dt, true);
      return;
    }
    this.segmentLeft -= dt;
    if (this.segmentLeft <= 0) this.newSegment();
    if (this.target < 65 && rng.chance((0.12 * dt) / 60)) {
      this.stopLeft = rng.between(15, 90);
      this.speed = 0;
      this.updateEngine(dt, true);
      return;
    }
    const v0 = this.speed;
    const wanted = this.target + rng.noise(4);
    // About 1.5 m/s² up (5.4 km/h per s) and 3 m/s² down.
    let v1 = v0 + clamp(wanted - v0, -10.8 * dt, 5.4 * dt);
    const perMinute = (this.aggressiveness * dt) / 60;
    if (v1 > 25 && rng.chance(0.012 * perMinute)) {
      this.events.push({ type: 'hard_brake', g: round(rng.between(0.35, 0.6), 2) });
      v1 -= rng.between(15, 30);
    } else if (v1 < 70 && rng.chance(0.01 * perMinute)) {
      this.events.push({ type: 'hard_accel', g: round(rng.between(0.35, 0.55), 2) });
      v1 += rng.between(5, 15);
    }
    v1 = clamp(v1, 5, 125);
    if (v1 > 20 && rng.chance((0.004 * dt) / HOUR)) {
      // A collision: the vehicle stops and stays parked for a while.
      const g = round(rng.between(2, 3), 2);
      this.events.push({ type: 'impact', g });
      // A major collision (2.5 g or more) deploys the airbags.
      if (g >= 2.5) this.events.push({ type: 'airbag_deployment', g });
      this.afterTrip = 'impact';
      this.phaseLeft = 0;
    }
    // Heading: gentle wander, the odd turn at a junction, and back towards the depot when far.
    this.heading += rng.noise(10) * Math.sqrt(dt / 30);
    if (this.target < 65 && rng.chance((0.1 * dt) / 60)) this.heading += rng.chance(0.5) ? 90 : -90;
    if (distanceM({ lat: this.lat, lon: this.lon }, { lat: this.homeLat, lon: this.homeLon }) > 40_000) {
      const home = bearingDeg(this.lat, this.lon, this.homeLat, this.homeLon);
      const diff = ((home - this.heading + 540) % 360) - 180;
      this.heading += clamp(diff, -45, 45);
    }
    this.heading = ((this.heading % 360) + 360) % 360;
    this.move((((v0 + v1) / 2) * dt) / HOUR);
    this.speed = this.afterTrip === 'impact' ? 0 : v1;
    this.updateEngine(dt, false);
    if ((this.fuelLiters / this.spec.tankLiters) * 100 < 8 && this.afterTrip === null) {
      this.afterTrip = 'refuel';
      this.phaseLeft = 0;
    }
  }

  step(dt: number, nowMs: number): void {
    switch (this.phase) {
      case 'off_shift':
        this.updateParked(dt, nowMs);
        if (nowMs >= this.nextShift) this.startShift(nowMs);
        break;
      case 'parked':
        this.updateParked(dt, nowMs);
        this.phaseLeft -= dt;
        if (this.phaseLeft <= 0) {
          if (nowMs >= this.shiftEnd) this.goOffShift(nowMs);
          else this.startTrip();
        }
        break;
      case 'idling':
        this.updateEngine(dt, true);
        this.phaseLeft -= dt;
        if (this.phaseLeft <= 0) {
          if (nowMs >= this.shiftEnd) this.goOffShift(nowMs);
          else this.startTrip();
        }
        break;
      case 'driving':
        this.drive(dt);
        this.phaseLeft -= dt;
        if (this.phaseLeft <= 0) {
          this.speed = 0;
          this.endTrip(nowMs);
        }
        break;
    }
    this.fuelLiters = clamp(this.fuelLiters, 0, this.spec.tankLiters);
    // The slow leak never stops, parked or not.
    if (this.roles.slowLeak) this.coldTires[2] = Math.max(60, this.coldTires[2]! - (2 * dt) / HOUR);
  }

  reading(at: Date, odometerOffsetKm: number): SimulatedReading {
    const rng = this.rng;
    const running = this.engineRunning();
    const moving = running && this.speed > 0;
    const signals: SimulatedSignals = {
      odometer_km: round(this.odometerKm + odometerOffsetKm, 3),
      fuel_percent: round(clamp((this.fuelLiters / this.spec.tankLiters) * 100, 0, 100), 1),
      battery_voltage: round(this.batteryVolts + rng.noise(0.01), 2),
      engine_state: running ? (moving ? 'on' : 'idle') : 'off',
      speed_kph: moving ? round(this.speed, 1) : 0,
      location: { lat: round(this.lat, 6), lon: round(this.lon, 6), heading: round(this.heading, 1) % 360 },
      engine_hours: round(this.engineHours, 2),
      oil_life_percent: round(this.oilLife, 1),
    };
    if (running) {
      signals.coolant_temp_c = round(this.coolant + rng.noise(0.5), 1);
      // Tires run about 7 % above their cold pressure when warm.
      const [fl, fr, rl, rr] = this.coldTires.map((kpa) =>
        round(kpa * (1 + 0.07 * this.tireWarmth) + rng.noise(0.5), 1),
      ) as [number, number, number, number];
      signals.tire_pressure_kpa = { front_left: fl, front_right: fr, rear_left: rl, rear_right: rr };
      signals.brake_lining_percent = brakeLiningPercent(this.odometerKm);
      signals.dtcs = this.dtcs.map(({ code, mil }) => ({ code, mil }));
      signals.check_engine_light = this.dtcs.some((d) => d.mil);
    }
    if (this.events.length > 0) {
      signals.events = this.events;
      this.events = [];
    }
    return { vehicle: this.id, ts: at.toISOString(), signals };
  }
}

// ---------------------------------------------------------------------------------------------
// The fleet

class Fleet implements SimulatedFleet {
  readonly vehicles: SimulatedVehicle[];
  readonly specialVehicles: SpecialVehicles;
  readonly staleAt: Date;
  readonly conflictAt: Date;
  private nowMs: number;
  private readonly sims: VehicleSim[];
  private readonly conflictJumpKm: number;

  constructor(options: SimulatedFleetOptions) {
    const { seed, vehicleCount, start } = options;
    if (!Number.isFinite(seed)) throw new RangeError('seed must be a finite number');
    if (!Number.isInteger(vehicleCount) || vehicleCount < 1)
      throw new RangeError('vehicleCount must be a positive integer');
    if (!(start instanceof Date) || Number.isNaN(start.getTime())) throw new RangeError('start must be a valid Date');
    const staleAfter = options.staleAfterSeconds ?? 2 * HOUR;
    const conflictAfter = options.conflictAfterSeconds ?? HOUR;
    this.conflictJumpKm = options.conflictJumpKm ?? 5000;
    if (!(staleAfter >= 0) || !(conflictAfter >= 0) || !(this.conflictJumpKm > 0))
      throw new RangeError('staleAfterSeconds, conflictAfterSeconds must be ≥ 0 and conflictJumpKm > 0');
    const fleetSeed = mixSeed(Math.floor(seed) >>> 0, Math.floor(seed / 4294967296) >>> 0);
    this.nowMs = start.getTime();
    this.staleAt = new Date(this.nowMs + staleAfter * 1000);
    this.conflictAt = new Date(this.nowMs + conflictAfter * 1000);

    const fleetRng = new Rng(mixSeed(fleetSeed, 0x7fffffff));
    const base = fleetRng.pick(bases);
    const prefix = options.idPrefix ?? 'sim';
    const pad = Math.max(3, String(vehicleCount).length);
    const id = (index: number) => `${prefix}-${String(index + 1).padStart(pad, '0')}`;
    const role = (offset: number) => offset % vehicleCount;
    this.specialVehicles = {
      stale: id(role(1)),
      conflict: id(role(2)),
      weakBattery: id(role(3)),
      overheating: id(role(4)),
      slowLeak: id(role(5)),
    };

    const vins = new Set<string>();
    this.vehicles = [];
    this.sims = [];
    for (let i = 0; i < vehicleCount; i++) {
      const spec = fleetRng.pick(catalog);
      const year = 2017 + Math.floor(fleetRng.between(0, 9)); // 2017–2025
      let vin = makeVin(fleetRng, spec.wmi, year);
      while (vins.has(vin)) vin = makeVin(fleetRng, spec.wmi, year);
      vins.add(vin);
      const providerVehicleId = id(i);
      this.vehicles.push({
        providerVehicleId,
        name: `Unit ${String(i + 1).padStart(2, '0')} - ${spec.make} ${spec.model}`,
        vin,
        make: spec.make,
        model: spec.model,
        year,
      });
      const roles: Roles = {
        stale: i === role(1),
        conflict: i === role(2),
        weakBattery: i === role(3),
        overheating: i === role(4),
        slowLeak: i === role(5),
      };
      this.sims.push(
        new VehicleSim(mixSeed(fleetSeed, i), providerVehicleId, spec, roles, base, this.nowMs, this.conflictJumpKm),
      );
    }
  }

  get now(): Date {
    return new Date(this.nowMs);
  }

  tick(stepSeconds: number): SimulatedTick {
    if (!Number.isFinite(stepSeconds) || stepSeconds <= 0)
      throw new RangeError('stepSeconds must be a positive number');
    const from = this.nowMs;
    this.nowMs = from + stepSeconds * 1000;
    const at = new Date(this.nowMs);
    const substeps = Math.ceil(stepSeconds / MAX_SUBSTEP_SECONDS);
    const dt = stepSeconds / substeps;
    const staleAt = this.staleAt.getTime();
    const conflictAt = this.conflictAt.getTime();
    const readings: SimulatedReading[] = [];
    for (const sim of this.sims) {
      // The stale vehicle is gone: not simulated, not reported.
      if (sim.id === this.specialVehicles.stale && this.nowMs > staleAt) continue;
      for (let s = 1; s <= substeps; s++) sim.step(dt, from + s * dt * 1000);
      const offset = sim.id === this.specialVehicles.conflict && this.nowMs >= conflictAt ? -this.conflictJumpKm : 0;
      readings.push(sim.reading(at, offset));
    }
    return { at, payload: { readings } };
  }
}

/** A deterministic simulated fleet: the same options and the same tick calls give identical output. */
export function createSimulatedFleet(options: SimulatedFleetOptions): SimulatedFleet {
  return new Fleet(options);
}
