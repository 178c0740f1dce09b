import { describe, expect, it } from 'vitest';
import { hmacHex } from '../../../providers/signing.js';
import {
  createSimulatedFleet,
  simulatedPayloads,
  type SimulatedFleetOptions,
  type SimulatedSignals,
  type SimulatedTick,
} from '../../../server/simulated-fleet.js';
import { signSimulatedBody, simulator } from '../../../providers/simulator.js';

const start = new Date('2026-05-04T00:00:00Z');
const options: SimulatedFleetOptions = { seed: 42, vehicleCount: 10, start };
const STEP = 60;
const TICKS = 48 * 60; // two simulated days, one reading a minute

/** Two days of the default fleet, computed once for the behaviour checks. */
const fleet = createSimulatedFleet(options);
const ticks: SimulatedTick[] = [...simulatedPayloads(fleet, TICKS, STEP)];
type Point = { at: number; s: SimulatedSignals };
const series = new Map<string, Point[]>();
for (const tick of ticks) {
  for (const reading of tick.payload.readings) {
    expect(reading.ts).toBe(tick.at.toISOString());
    const list = series.get(reading.vehicle) ?? [];
    list.push({ at: tick.at.getTime(), s: reading.signals });
    series.set(reading.vehicle, list);
  }
}
const special = fleet.specialVehicles;
const pairs = (points: Point[]) => points.slice(1).map((p, i) => [points[i]!, p] as const);

function haversineKm(a: { lat: number; lon: number }, b: { lat: number; lon: number }): number {
  const r = (d: number) => (d * Math.PI) / 180;
  const h =
    Math.sin(r(b.lat - a.lat) / 2) ** 2 + Math.cos(r(a.lat)) * Math.cos(r(b.lat)) * Math.sin(r(b.lon - a.lon) / 2) ** 2;
  return 2 * 6371.0088 * Math.asin(Math.sqrt(h));
}

/** ISO 3779 check digit, written independently of the generator. */
function vinIsValid(vin: string): boolean {
  if (!/^[A-HJ-NPR-Z0-9]{17}$/.test(vin)) return false;
  const values = '0123456789.ABCDEFGH..JKLMN.P.R..STUVWXYZ';
  const weights = [8, 7, 6, 5, 4, 3, 2, 10, 0, 9, 8, 7, 6, 5, 4, 3, 2];
  const sum = [...vin].reduce(
    (acc, ch, i) =>
      acc + (/\d/.test(ch) ? Number(ch) : values.indexOf(ch) % 10 === 0 ? 9 : values.indexOf(ch) % 10) * weights[i]!,
    0,
  );
  const check = sum % 11 === 10 ? 'X' : String(sum % 11);
  return vin[8] === check;
}

describe('simulator adapter', () => {
  it('normalizes the generic format and verifies the generic X-Signature', () => {
    expect(simulator.id).toBe('simulator');
    expect(simulator.refresh).toBe('not_implemented');
    const body = JSON.stringify(ticks[0]!.payload);
    const secret = 'sim-secret';
    const request = (signature?: string) => ({
      method: 'POST',
      headers: signature ? { 'x-signature': signature } : {},
      pathToken: null,
      rawBody: Buffer.from(body),
    });
    expect(signSimulatedBody(body, secret)).toBe(`sha256=${hmacHex('sha256', secret, body)}`);
    expect(simulator.push!.verify(request(signSimulatedBody(body, secret)), secret, start)).toEqual({ ok: true });
    expect(simulator.push!.verify(request(signSimulatedBody(body, 'other')), secret, start)).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
    expect(simulator.push!.verify(request(), secret, start)).toEqual({ ok: false, reason: 'missing_signature' });
  });

  it('every tick of two days normalizes with ok:true, no skipped entry, every signal and event kept', () => {
    for (const tick of ticks) {
      const result = simulator.normalize(
        { contentType: 'application/json', body: JSON.stringify(tick.payload) },
        tick.at,
      );
      if (!result.ok) throw new Error(result.reason);
      expect(result.skipped).toEqual([]);
      const signals = tick.payload.readings.reduce(
        (n, r) => n + Object.keys(r.signals).filter((k) => k !== 'events').length,
        0,
      );
      const events = tick.payload.readings.reduce((n, r) => n + (r.signals.events?.length ?? 0), 0);
      expect(result.samples).toHaveLength(signals);
      expect(result.events).toHaveLength(events);
      expect(result.samples.every((s) => s.recordedAt.getTime() === tick.at.getTime())).toBe(true);
    }
  });
});

describe('simulated fleet', () => {
  it('describes its vehicles deterministically, with valid unique VINs', () => {
    expect(fleet.vehicles.map((v) => v.providerVehicleId)).toEqual(
      Array.from({ length: 10 }, (_, i) => `sim-${String(i + 1).padStart(3, '0')}`),
    );
    for (const v of fleet.vehicles) {
      expect(vinIsValid(v.vin), v.vin).toBe(true);
      expect(v.year).toBeGreaterThanOrEqual(2017);
      expect(v.year).toBeLessThanOrEqual(2025);
      expect(v.make && v.model && v.name).toBeTruthy();
    }
    expect(new Set(fleet.vehicles.map((v) => v.vin)).size).toBe(10);
    expect(createSimulatedFleet(options).vehicles).toEqual(fleet.vehicles);
    expect(createSimulatedFleet({ ...options, seed: 43 }).vehicles.map((v) => v.vin)).not.toEqual(
      fleet.vehicles.map((v) => v.vin),
    );
    const ids = fleet.vehicles.map((v) => v.providerVehicleId);
    expect(new Set(Object.values(special)).size).toBe(5);
    for (const id of Object.values(special)) expect(ids).toContain(id);
    const prefixed = createSimulatedFleet({ ...options, vehicleCount: 3, idPrefix: 'demo' });
    expect(prefixed.vehicles.map((v) => v.providerVehicleId)).toEqual(['demo-001', 'demo-002', 'demo-003']);
    expect(prefixed.tick(60).payload.readings.map((r) => r.vehicle)).toEqual(['demo-001', 'demo-002', 'demo-003']);
  });

  it('is deterministic: the same seed and calls give deep-equal ticks, another seed differs', () => {
    const a = createSimulatedFleet(options);
    const b = createSimulatedFleet(options);
    const steps = [1, 15, 60, 300, 45, 3600, 10];
    for (let i = 0; i < 400; i++) {
      const step = steps[i % steps.length]!;
      expect(b.tick(step)).toEqual(a.tick(step));
    }
    const c = createSimulatedFleet({ ...options, seed: 7 });
    const d = createSimulatedFleet(options);
    expect(c.tick(60)).not.toEqual(d.tick(60));
    // The first two days of a fresh fleet equal the shared run.
    expect([...simulatedPayloads(createSimulatedFleet(options), 50, STEP)]).toEqual(ticks.slice(0, 50));
  });

  it('advances time by the step and rejects a bad step or bad options', () => {
    const f = createSimulatedFleet(options);
    expect(f.now).toEqual(start);
    expect(f.tick(90).at).toEqual(new Date(start.getTime() + 90_000));
    expect(f.tick(0.5).at).toEqual(new Date(start.getTime() + 90_500));
    expect(f.now).toEqual(new Date(start.getTime() + 90_500));
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) expect(() => f.tick(bad)).toThrow(RangeError);
    expect(() => createSimulatedFleet({ ...options, vehicleCount: 0 })).toThrow(RangeError);
    expect(() => createSimulatedFleet({ ...options, start: new Date('nope') })).toThrow(RangeError);
    expect(ticks[TICKS - 1]!.at).toEqual(new Date(start.getTime() + TICKS * STEP * 1000));
  });

  it('the stale vehicle reports until its time and then disappears; the others report every tick', () => {
    expect(fleet.staleAt).toEqual(new Date(start.getTime() + 2 * 3600_000));
    for (const tick of ticks) {
      const ids = tick.payload.readings.map((r) => r.vehicle);
      expect(ids.includes(special.stale)).toBe(tick.at <= fleet.staleAt);
      expect(ids.filter((id) => id !== special.stale)).toHaveLength(9);
    }
    const early = createSimulatedFleet({ ...options, staleAfterSeconds: 600 });
    const seen = [...simulatedPayloads(early, 20, 60)].map((t) =>
      t.payload.readings.some((r) => r.vehicle === early.specialVehicles.stale),
    );
    expect(seen).toEqual([...Array(10).fill(true), ...Array(10).fill(false)]);
  });

  it('odometers only grow, except the conflict vehicle that jumps back ~5,000 km once and counts on from there', () => {
    for (const [id, points] of series) {
      const drops = pairs(points).filter(([a, b]) => b.s.odometer_km < a.s.odometer_km);
      if (id !== special.conflict) {
        expect(drops, id).toEqual([]);
        continue;
      }
      expect(drops).toHaveLength(1);
      const [before, after] = drops[0]!;
      expect(after.at).toBe(fleet.conflictAt.getTime());
      expect(before.s.odometer_km - after.s.odometer_km).toBeGreaterThan(4_990);
      expect(before.s.odometer_km - after.s.odometer_km).toBeLessThanOrEqual(5_000);
    }
    // Every vehicle that is not stale has driven a plausible distance in two days.
    for (const [id, points] of series) {
      if (id === special.stale) continue;
      const km = points.at(-1)!.s.odometer_km - points[0]!.s.odometer_km + (id === special.conflict ? 5000 : 0);
      expect(km, id).toBeGreaterThan(100);
      expect(km, id).toBeLessThan(1500);
    }
  });

  it('moves along its heading by speed × time: position changes match the odometer', () => {
    for (const [, points] of series) {
      for (const [a, b] of pairs(points)) {
        const odo = b.s.odometer_km - a.s.odometer_km;
        const moved = haversineKm(a.s.location, b.s.location);
        if (odo < 0) continue; // the conflict jump
        // Odometer rounding (1 m) and coordinate rounding (0.1 m) allow ~1.3 m of slack.
        expect(moved).toBeLessThanOrEqual(odo + 0.002);
        // One minute at ≤ 125 km/h.
        expect(odo).toBeLessThanOrEqual((125 * STEP) / 3600 + 1e-9);
        if (a.s.engine_state === 'off' && b.s.engine_state === 'off') expect(odo).toBe(0);
      }
    }
  });

  it('stays in realistic ranges and keeps engine state, speed and OBD values consistent', () => {
    const realistic = ({ s }: Point): boolean => {
      const running = s.engine_state !== 'off';
      return (
        s.speed_kph >= 0 &&
        s.speed_kph <= 130 &&
        s.battery_voltage >= 11 &&
        s.battery_voltage <= 15 &&
        s.speed_kph > 0 === (s.engine_state === 'on') &&
        (running ? s.battery_voltage >= 13.55 && s.battery_voltage <= 14.45 : s.battery_voltage <= 12.8) &&
        (s.coolant_temp_c !== undefined) === running &&
        (s.tire_pressure_kpa !== undefined) === running &&
        (s.dtcs !== undefined) === running &&
        s.check_engine_light === s.dtcs?.some((d) => d.mil) &&
        s.fuel_percent >= 0 &&
        s.fuel_percent <= 100 &&
        s.oil_life_percent >= 0 &&
        s.oil_life_percent <= 100 &&
        Math.abs(s.location.lat) <= 90 &&
        s.location.heading !== null &&
        s.location.heading >= 0 &&
        s.location.heading < 360
      );
    };
    const violations = [...series].flatMap(([id, points]) =>
      points.filter((p) => !realistic(p)).map((p) => ({ id, ...p })),
    );
    expect(violations.slice(0, 3)).toEqual([]);
    const speeds = [...series.values()].flat().map((p) => p.s.speed_kph);
    expect(Math.max(...speeds)).toBeGreaterThan(90); // some highway driving
    for (const [id, points] of series) {
      for (const [a, b] of pairs(points)) {
        const hours = b.s.engine_hours - a.s.engine_hours;
        expect(hours, id).toBeGreaterThanOrEqual(0);
        expect(hours, id).toBeLessThanOrEqual(STEP / 3600 + 0.01);
      }
    }
  });

  it('burns fuel with distance and idling, and refuels to 95–100 % when low', () => {
    let refuels = 0;
    for (const [id, points] of series) {
      let burned = 0;
      for (const [a, b] of pairs(points)) {
        const delta = b.s.fuel_percent - a.s.fuel_percent;
        if (delta > 0) {
          refuels += 1;
          expect(a.s.fuel_percent, id).toBeLessThan(20);
          expect(b.s.fuel_percent, id).toBeGreaterThanOrEqual(95);
          continue;
        }
        burned -= delta;
        // Parked, nothing burns.
        if (a.s.engine_state === 'off' && b.s.engine_state === 'off') expect(delta, id).toBe(0);
      }
      const km = points.at(-1)!.s.odometer_km - points[0]!.s.odometer_km;
      if (id !== special.stale && id !== special.conflict) {
        // Vans use roughly 8–20 L/100 km of a 55–117 L tank: about 0.07–0.4 % of the tank per km.
        expect(burned / km, id).toBeGreaterThan(0.07);
        expect(burned / km, id).toBeLessThan(0.4);
      }
    }
    expect(refuels).toBeGreaterThanOrEqual(3);
  });

  it('has idling episodes, some longer than 10 minutes', () => {
    let longest = 0;
    for (const [, points] of series) {
      let run = 0;
      for (const { s } of points) {
        run = s.engine_state === 'idle' ? run + 1 : 0;
        longest = Math.max(longest, run);
        if (s.engine_state === 'idle') expect(s.speed_kph).toBe(0);
      }
    }
    expect(longest * STEP).toBeGreaterThan(10 * 60);
  });

  it('charges while running, rests at 12.3–12.7 V parked, and the weak battery drains below 11.8 V', () => {
    for (const [id, points] of series) {
      const parked = points.filter((p) => p.s.engine_state === 'off').map((p) => p.s.battery_voltage);
      if (id === special.weakBattery) {
        expect(Math.min(...parked)).toBeLessThan(11.8);
      } else {
        expect(Math.min(...parked), id).toBeGreaterThanOrEqual(12.28);
        expect(Math.max(...parked), id).toBeLessThanOrEqual(12.76);
      }
    }
  });

  it('warms coolant to 85–95 °C; only the overheating vehicle passes 105 °C (with P0217)', () => {
    for (const [id, points] of series) {
      const coolant = points.flatMap((p) => (p.s.coolant_temp_c === undefined ? [] : [p.s.coolant_temp_c]));
      if (id === special.stale) continue;
      const max = Math.max(...coolant);
      if (id === special.overheating) {
        expect(max).toBeGreaterThan(105);
        expect(points.some((p) => p.s.dtcs?.some((d) => d.code === 'P0217' && d.mil))).toBe(true);
      } else {
        expect(max, id).toBeGreaterThanOrEqual(85);
        expect(max, id).toBeLessThanOrEqual(95);
      }
    }
  });

  it('keeps tires near a ~240 kPa placard, except one slow leak', () => {
    for (const [id, points] of series) {
      const tires = points.flatMap((p) => (p.s.tire_pressure_kpa ? [p.s.tire_pressure_kpa] : []));
      if (id === special.stale) continue;
      const values = (key: 'front_left' | 'rear_left') => tires.map((t) => t[key]!);
      expect(Math.min(...values('front_left')), id).toBeGreaterThan(215);
      expect(Math.max(...values('front_left')), id).toBeLessThan(280);
      if (id === special.slowLeak) expect(Math.min(...values('rear_left'))).toBeLessThan(0.75 * 240);
      else expect(Math.min(...values('rear_left')), id).toBeGreaterThan(215);
    }
  });

  it('raises DTCs that later clear, with the check-engine light following the MIL', () => {
    let cleared = 0;
    for (const [, points] of series) {
      const running = points.filter((p) => p.s.dtcs !== undefined);
      for (const [a, b] of pairs(running)) {
        for (const dtc of a.s.dtcs!) if (!b.s.dtcs!.some((d) => d.code === dtc.code)) cleared += 1;
      }
    }
    const codes = new Set([...series.values()].flat().flatMap((p) => p.s.dtcs?.map((d) => d.code) ?? []));
    expect(codes.size).toBeGreaterThanOrEqual(2);
    expect(cleared).toBeGreaterThanOrEqual(1);
    expect([...series.values()].flat().some((p) => p.s.check_engine_light === true)).toBe(true);
  });

  it('reports harsh events with realistic g values, and rare impacts that stop the vehicle', () => {
    const events = [...series.values()].flat().flatMap((p) => (p.s.events ?? []).map((e) => ({ ...e, p })));
    expect(events.filter((e) => e.type === 'hard_brake').length).toBeGreaterThan(5);
    expect(events.filter((e) => e.type === 'hard_accel').length).toBeGreaterThan(5);
    for (const e of events) {
      if (e.type === 'impact') {
        expect(e.g).toBeGreaterThanOrEqual(2);
        expect(e.g).toBeLessThanOrEqual(3);
      } else if (e.type === 'airbag_deployment') {
        // Only a major collision deploys the airbags, reported with its impact.
        expect(e.g).toBeGreaterThanOrEqual(2.5);
        expect(e.g).toBeLessThanOrEqual(3);
        expect(e.p.s.events).toContainEqual({ type: 'impact', g: e.g });
      } else {
        expect(e.g).toBeGreaterThanOrEqual(0.35);
        expect(e.g).toBeLessThanOrEqual(0.6);
      }
    }
    // Impacts are rare: over a long run of a bigger fleet some happen, and the vehicle then stops.
    const big = createSimulatedFleet({ seed: 5, vehicleCount: 40, start });
    let impacts = 0;
    for (const tick of simulatedPayloads(big, 7 * 24 * 12, 300)) {
      for (const r of tick.payload.readings) {
        for (const e of r.signals.events ?? []) {
          if (e.type !== 'impact') continue;
          impacts += 1;
          expect(e.g).toBeGreaterThanOrEqual(2);
          expect(r.signals.speed_kph).toBe(0);
        }
      }
    }
    expect(impacts).toBeGreaterThan(0);
    expect(impacts).toBeLessThan(40);
  });

  it('now and then produces what every monitoring kind detects: airbag deployments, worn brakes, ABS, airbag and transmission codes', () => {
    const big = createSimulatedFleet({ seed: 5, vehicleCount: 40, start });
    let deployments = 0;
    const codes = new Set<string>();
    let lowestLining = 100;
    let highestLining = 0;
    for (const tick of simulatedPayloads(big, 7 * 24 * 12, 300)) {
      for (const r of tick.payload.readings) {
        deployments += (r.signals.events ?? []).filter((e) => e.type === 'airbag_deployment').length;
        for (const d of r.signals.dtcs ?? []) codes.add(d.code);
        const lining = r.signals.brake_lining_percent;
        if (lining === undefined) continue;
        expect(lining).toBeGreaterThanOrEqual(10);
        expect(lining).toBeLessThanOrEqual(100);
        lowestLining = Math.min(lowestLining, lining);
        highestLining = Math.max(highestLining, lining);
      }
    }
    expect(deployments).toBeGreaterThan(0);
    expect(lowestLining).toBeLessThan(25);
    expect(highestLining).toBeGreaterThan(50);
    for (const prefix of ['B', 'C', 'P07', 'P04'])
      expect(
        [...codes].some((c) => c.startsWith(prefix)),
        prefix,
      ).toBe(true);
  });

  it('keeps no history: a long run does not grow what one tick returns', () => {
    const f = createSimulatedFleet({ ...options, vehicleCount: 3 });
    const first = JSON.stringify(f.tick(60)).length;
    let last = 0;
    for (const tick of simulatedPayloads(f, 5000, 60)) last = JSON.stringify(tick).length;
    expect(last).toBeLessThan(first * 2);
  });
});
