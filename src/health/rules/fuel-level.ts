/**
 * Fuel level (docs/health.md "Sources" `fuel_level_low`): at or below `lowPercent` for
 * `confirmSeconds` with the engine running: low; at or below `criticalPercent` for the same time:
 * medium. Latched until a refuel brings the level to `rearmPercent` or more, whatever the engine
 * state, so a level sloshing around the threshold raises one alert.
 *
 * - Only running time confirms: a parked vehicle's gauge reads unreliably on a slope, and nobody
 *   needs a low-fuel alert for a vehicle that is not going anywhere.
 * - Engine state unknown (no `engine_state` sample yet) counts as running: Motive and Smartcar
 *   send fuel but no engine state, and would otherwise never be checked.
 * - time: a condition holds from its first sample until a sample stops showing it; between
 *   samples (and in a sweep without samples) the last value is taken to hold. The level does not
 *   change when the engine starts, so a low last reading starts the timer at engine-on.
 *
 * State is JSON: epoch ms numbers.
 */
import type { AlertSeverity } from '../../domain/vehicle.js';
import type { HealthConfig } from '../../domain/health-config.js';
import { engineGatedRule } from './engine-state.js';
import { nonNegativeValue } from '../sample-values.js';

type FuelSeverity = Extract<AlertSeverity, 'low' | 'medium'>;

export interface FuelState {
  /** From `engine_state` samples; null (unknown) counts as running. */
  running: boolean | null;
  lastPercent: number | null;
  /** Running, at or below `lowPercent` since. */
  lowSinceMs: number | null;
  /** Running, at or below `criticalPercent` since. */
  criticalSinceMs: number | null;
  alert: { severity: FuelSeverity; displayName: string } | null;
}

const ALERT_TYPE = 'fuel_level_low';
const ALERT_KEY = 'fuel';
const severityRank: Record<FuelSeverity, number> = { low: 0, medium: 1 };

type FuelConfig = HealthConfig['fuel'];

function initialFuelState(): FuelState {
  return { running: null, lastPercent: null, lowSinceMs: null, criticalSinceMs: null, alert: null };
}

function displayName(level: number | null): string {
  return `Fuel low: ${level === null ? '?' : Math.round(level)}%`;
}

/** The confirmation timers for the last level, counted only while the engine runs. */
function timers(state: FuelState, atMs: number, config: FuelConfig): Pick<FuelState, 'lowSinceMs' | 'criticalSinceMs'> {
  const level = state.lastPercent;
  if (state.running === false || level === null) return { lowSinceMs: null, criticalSinceMs: null };
  return {
    lowSinceMs: level <= config.lowPercent ? (state.lowSinceMs ?? atMs) : null,
    criticalSinceMs: level <= config.criticalPercent ? (state.criticalSinceMs ?? atMs) : null,
  };
}

/** Completes the confirmation timers that have run their duration by `atMs`; never lowers severity. */
function settle(state: FuelState, atMs: number, config: FuelConfig): FuelState {
  const held = (since: number | null) => since !== null && atMs - since >= config.confirmSeconds * 1000;
  const severity: FuelSeverity | null = held(state.criticalSinceMs) ? 'medium' : held(state.lowSinceMs) ? 'low' : null;
  if (!severity) return state;
  if (state.alert && severityRank[severity] <= severityRank[state.alert.severity]) return state;
  return { ...state, alert: { severity, displayName: displayName(state.lastPercent) } };
}

function timerEndsMs(state: FuelState, config: FuelConfig): Array<number | null> {
  const end = (since: number | null) => (since === null ? null : since + config.confirmSeconds * 1000);
  return [end(state.lowSinceMs), end(state.criticalSinceMs)];
}

function applyLevel(state: FuelState, level: number, atMs: number, config: FuelConfig): FuelState {
  const refuelled = level >= config.rearmPercent;
  const next: FuelState = { ...state, lastPercent: level, alert: refuelled ? null : state.alert };
  return { ...next, ...timers(next, atMs, config) };
}

function applyEngineState(state: FuelState, running: boolean, atMs: number, config: FuelConfig): FuelState {
  if (running === (state.running !== false)) return { ...state, running };
  const next: FuelState = { ...state, running, lowSinceMs: null, criticalSinceMs: null };
  return { ...next, ...timers(next, atMs, config) };
}

export const fuelLevelRule = engineGatedRule<FuelState, FuelConfig>({
  name: 'fuel_level',
  signal: 'fuel_percent',
  alertKey: ALERT_KEY,
  alertType: ALERT_TYPE,
  initial: initialFuelState,
  configOf: (config) => config.fuel,
  parse: nonNegativeValue,
  settle,
  timerEndsMs,
  applyEngine: applyEngineState,
  applyValue: applyLevel,
});
