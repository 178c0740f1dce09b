import { describe, expect, it } from 'vitest';
import { defaultHealthConfig } from '../../../src/domain/health-config.js';
import type { RuleSample } from '../../../src/domain/sample.js';
import { evaluateVehicleHealth } from '../../../src/health/evaluate.js';
import { loadedHealthState, storedHealthState, storesAs } from '../../../src/health/stored-state.js';

const t0 = new Date('2026-11-01T08:00:00.000Z');
const minute = 60_000;
const at = (minutes: number) => new Date(t0.getTime() + minutes * minute);
const sample = (signal: string, minutes: number, value: unknown): RuleSample => ({
  signal,
  recordedAt: at(minutes),
  value,
  source: 'samsara',
});
const vehicle = { telematicsProvider: 'samsara', createdAt: new Date('2026-01-01T00:00:00.000Z'), lastServices: {} };

/** The state as the database hands it back: a JSON round trip. */
const stored = (value: unknown) => JSON.parse(JSON.stringify(value));

/** A vehicle with an odometer, a low battery alert running and a tire alert latched. */
function evaluated() {
  return evaluateVehicleHealth(
    null,
    [
      sample('odometer_km', 0, 12_000),
      sample('engine_state', 0, 'off'),
      sample('battery_voltage', 1, 11.2),
      sample('tire_pressure_kpa', 2, { front_left: 150, front_right: 240, rear_left: 240, rear_right: 240 }),
      sample('fuel_percent', 3, 40),
      sample('battery_voltage', 200, 11.1),
    ],
    vehicle,
    defaultHealthConfig,
    at(240),
    true,
  );
}

describe('stored health state', () => {
  it('loads back to the state the rules returned', () => {
    const { state } = evaluated();
    expect(loadedHealthState(stored(storedHealthState(state)))).toEqual(stored(state));
  });

  it('leaves out the fields still at their initial value and the rules still at their initial state', () => {
    const { state } = evaluated();
    const compact = stored(storedHealthState(state));
    // The engine state reaches the engine-gated rules; no code, lining or maintenance state yet.
    expect(Object.keys(compact.rules).sort()).toEqual([
      'battery_voltage',
      'coolant_temperature',
      'fuel_level',
      'tire_pressure',
    ]);
    expect(compact.rules.coolant_temperature).toEqual({ running: false });
    expect(compact.rules.fuel_level).toEqual({ lastPercent: 40, running: false });
    expect(compact.link).not.toHaveProperty('candidates');
    expect(compact.link).not.toHaveProperty('conflict');
  });

  it('keeps the alerts, status and link reason as they are', () => {
    const { state } = evaluated();
    const compact = storedHealthState(state);
    expect(compact.alerts).toBe(state.alerts);
    expect(compact).toMatchObject({ status: state.status, linkReason: state.linkReason });
  });

  it('loads a state stored in full (before the compact encoding) unchanged', () => {
    const { state } = evaluated();
    expect(loadedHealthState(stored(state))).toEqual(stored(state));
  });

  it('evaluates from a loaded state exactly as from the full one', () => {
    const { state } = evaluated();
    const next = (previous: typeof state) =>
      evaluateVehicleHealth(
        previous,
        [sample('battery_voltage', 300, 12.7), sample('fuel_percent', 301, 8)],
        vehicle,
        defaultHealthConfig,
        at(400),
        true,
      );
    expect(next(loadedHealthState(stored(storedHealthState(state))))).toEqual(next(stored(state)));
  });

  it('gives each load fresh initial arrays and objects', () => {
    const first = loadedHealthState({ alerts: [], status: 'unknown', linkReason: null });
    const second = loadedHealthState({ alerts: [], status: 'unknown', linkReason: null });
    expect(first.link.daily).not.toBe(second.link.daily);
    expect(first.rules.tire_pressure).not.toBe(second.rules.tire_pressure);
  });

  it('tells an evaluation that changed nothing from one that changed a rule, the link or the alerts', () => {
    const { state } = evaluated();
    const row = stored(storedHealthState(state));
    const again = (samples: RuleSample[], minutes: number) =>
      evaluateVehicleHealth(loadedHealthState(row), samples, vehicle, defaultHealthConfig, at(minutes), true);
    const idle = again([], 241);
    expect(storesAs(idle.state, loadedHealthState(row), row)).toBe(true);
    const previous = loadedHealthState(row);
    const fuel = evaluateVehicleHealth(
      previous,
      [sample('fuel_percent', 241, 39)],
      vehicle,
      defaultHealthConfig,
      at(241),
      true,
    );
    expect(storesAs(fuel.state, previous, row)).toBe(false);
    const before = loadedHealthState(row);
    const odometer = evaluateVehicleHealth(
      before,
      [sample('odometer_km', 241, 12_050)],
      vehicle,
      defaultHealthConfig,
      at(241),
      true,
    );
    expect(storesAs(odometer.state, before, row)).toBe(false);
  });

  it('compares a rule returned as a new object by value', () => {
    const { state } = evaluated();
    const row = stored(storedHealthState(state));
    const previous = loadedHealthState(row);
    const copied = {
      ...previous,
      rules: Object.fromEntries(Object.entries(previous.rules).map(([k, v]) => [k, stored(v)])),
    };
    expect(storesAs(copied, previous, row)).toBe(true);
    const moved = {
      ...copied,
      rules: { ...copied.rules, brake_lining: { alert: { severity: 'medium', percent: 20 } } },
    };
    expect(storesAs(moved, previous, row)).toBe(false);
  });

  it('finds a row stored in full different from a changed state, so it is rewritten compact', () => {
    const { state } = evaluated();
    const full = stored(state);
    const previous = loadedHealthState(full);
    const copied = { ...previous, link: stored(previous.link) };
    expect(storesAs(copied, previous, full)).toBe(false);
  });
});
