/**
 * Coolant temperature (docs/health.md "Sources" `coolant_temperature_high`): overheating while
 * the engine runs. At or above `highC` for `confirmSeconds`: high; at or above `criticalC`: critical
 * at once (a boiling engine cannot wait for confirmation). Latched until the temperature stayed
 * below `highC − rearmMarginC` for `rearmSeconds`.
 *
 * - Only running-engine readings raise: after shut-off the coolant stops circulating and heat
 *   soak pushes the sensor up without harm. Any reading counts toward clearing: a cool engine is
 *   cool whether or not it runs.
 * - Engine state unknown (no `engine_state` sample yet) counts as running: a provider that sends
 *   coolant but no engine state would otherwise never be checked.
 * - time: a condition holds from its first sample until a sample stops showing it; between
 *   samples (and in a sweep without samples) the last value is taken to hold.
 *
 * State is JSON: epoch ms numbers.
 */
import type { AlertSeverity } from '../../domain/vehicle.js';
import type { HealthConfig } from '../../domain/health-config.js';
import { engineGatedRule } from './engine-state.js';
import { finiteValue } from '../sample-values.js';

type CoolantSeverity = Extract<AlertSeverity, 'high' | 'critical'>;

export interface CoolantState {
  /** From `engine_state` samples; null (unknown) counts as running. */
  running: boolean | null;
  /** The last temperature used, for the display name when the timer completes in a sweep. */
  lastCelsius: number | null;
  /** Running, at or above `highC` since. */
  highSinceMs: number | null;
  /** While an alert is active: below `highC − rearmMarginC` since. */
  recoverSinceMs: number | null;
  alert: { severity: CoolantSeverity; displayName: string } | null;
}

const ALERT_TYPE = 'coolant_temperature_high';
const ALERT_KEY = 'coolant';
const severityRank: Record<CoolantSeverity, number> = { high: 0, critical: 1 };

type CoolantConfig = HealthConfig['coolant'];

function initialCoolantState(): CoolantState {
  return { running: null, lastCelsius: null, highSinceMs: null, recoverSinceMs: null, alert: null };
}

function displayName(temperature: number | null): string {
  return `Coolant temperature high: ${temperature === null ? '?' : Math.round(temperature)} °C`;
}

/** Raises or escalates; never lowers the severity of the running episode. */
function raise(state: CoolantState, severity: CoolantSeverity): CoolantState {
  const current = state.alert;
  if (current && severityRank[severity] <= severityRank[current.severity]) return state;
  return { ...state, recoverSinceMs: null, alert: { severity, displayName: displayName(state.lastCelsius) } };
}

/** Completes whatever timers have run their duration by `atMs`: clear first, then raise. */
function settle(state: CoolantState, atMs: number, config: CoolantConfig): CoolantState {
  let next = state;
  if (next.alert && next.recoverSinceMs !== null && atMs - next.recoverSinceMs >= config.rearmSeconds * 1000) {
    next = { ...next, alert: null, recoverSinceMs: null };
  }
  if (next.highSinceMs !== null && atMs - next.highSinceMs >= config.confirmSeconds * 1000) next = raise(next, 'high');
  return next;
}

function timerEndsMs(state: CoolantState, config: CoolantConfig): Array<number | null> {
  return [
    state.alert && state.recoverSinceMs !== null ? state.recoverSinceMs + config.rearmSeconds * 1000 : null,
    state.highSinceMs === null ? null : state.highSinceMs + config.confirmSeconds * 1000,
  ];
}

function applyTemperature(state: CoolantState, temperature: number, atMs: number, config: CoolantConfig): CoolantState {
  const running = state.running !== false;
  const high = running && temperature >= config.highC;
  const recovering = state.alert !== null && temperature < config.highC - config.rearmMarginC;
  const next: CoolantState = {
    ...state,
    lastCelsius: temperature,
    highSinceMs: high ? (state.highSinceMs ?? atMs) : null,
    recoverSinceMs: recovering ? (state.recoverSinceMs ?? atMs) : null,
  };
  return running && temperature >= config.criticalC ? raise(next, 'critical') : next;
}

function applyEngineState(state: CoolantState, running: boolean): CoolantState {
  // A new run needs a new reading: the last one may be hours old.
  return running ? { ...state, running } : { ...state, running, highSinceMs: null };
}

export const coolantTemperatureRule = engineGatedRule<CoolantState, CoolantConfig>({
  name: 'coolant_temperature',
  signal: 'coolant_temp_c',
  alertKey: ALERT_KEY,
  alertType: ALERT_TYPE,
  initial: initialCoolantState,
  configOf: (config) => config.coolant,
  parse: finiteValue,
  settle,
  timerEndsMs,
  applyEngine: (state, running) => applyEngineState(state, running),
  applyValue: applyTemperature,
});
