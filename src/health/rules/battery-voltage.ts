/**
 * Battery voltage (docs/health.md "Sources" `battery_voltage_low`): a low resting voltage with
 * the engine off, or a charging fault (below the alternator floor) with it running. Both must hold
 * for a confirmation time, so one sagging reading raises nothing, and the alert clears only after
 * the voltage stayed above the raising threshold plus a margin for `rearmSeconds`.
 *
 * - mode: `resting` (engine off, or never reported) or `charging` (engine on or idle). Switching
 *   mode restarts the confirmation timers: the two conditions measure different things.
 * - cranking: the starter pulls the voltage down for a few seconds; samples within
 *   `crankingIgnoreSeconds` of the engine turning on are ignored entirely.
 * - time: a condition holds from its first sample until a sample stops showing it; between
 *   samples (and in a sweep without samples) the last value is taken to hold.
 *
 * State is JSON: epoch ms numbers, and at most two entries in `raisedBy`.
 */
import type { AlertSeverity } from '../../domain/vehicle.js';
import type { HealthConfig } from '../../domain/health-config.js';
import { engineGatedRule } from './engine-state.js';

type BatteryMode = 'resting' | 'charging';
type BatterySeverity = Extract<AlertSeverity, 'medium' | 'high'>;

export interface BatteryState {
  /**
   * From `engine_state` samples; null until the first one. Unknown counts as resting: the resting
   * thresholds are the lower ones, so a healthy running engine (≈ 14 V) cannot trip them, while
   * the charging floor would fire on every parked vehicle that reports no engine state (Motive).
   */
  running: boolean | null;
  /** When the engine last turned on: the cranking window starts here. */
  engineOnAtMs: number | null;
  /** The last voltage used, for the display name when a timer completes in a sweep. */
  lastVolts: number | null;
  /** Below the current mode's low threshold since (resting low or charging floor). */
  lowSinceMs: number | null;
  /** Engine off, below the critical threshold since. */
  criticalSinceMs: number | null;
  /** While an alert is active: at or above its re-arm voltage since. */
  recoverSinceMs: number | null;
  alert: { severity: BatterySeverity; raisedBy: BatteryMode[]; displayName: string } | null;
}

const ALERT_TYPE = 'battery_voltage_low';
const ALERT_KEY = 'battery';
/** Thresholds are scaled by nominalVolts / 12; float products must still meet the boundary. */
const EPSILON_VOLTS = 1e-9;
const severityRank: Record<BatterySeverity, number> = { medium: 0, high: 1 };

type BatteryConfig = HealthConfig['battery'];

function initialBatteryState(): BatteryState {
  return {
    running: null,
    engineOnAtMs: null,
    lastVolts: null,
    lowSinceMs: null,
    criticalSinceMs: null,
    recoverSinceMs: null,
    alert: null,
  };
}

/** 24 V systems double every threshold; a missing or odd nominal voltage means 12 V. */
function voltScale(config: BatteryConfig): number {
  return Number.isFinite(config.nominalVolts) && config.nominalVolts > 0 ? config.nominalVolts / 12 : 1;
}

function modeOf(state: BatteryState): BatteryMode {
  return state.running === true ? 'charging' : 'resting';
}

/**
 * The voltage an alert must recover to. An alert raised below the critical threshold was also
 * below the resting low one, so resting re-arms from the low threshold: re-arming from the
 * critical one would clear at a voltage that still confirms a new medium alert.
 */
function rearmVolts(raisedBy: readonly BatteryMode[], config: BatteryConfig): number {
  const scale = voltScale(config);
  const thresholds = raisedBy.map((mode) => (mode === 'charging' ? config.chargingLowVolts : config.restingLowVolts));
  return (Math.max(...thresholds) + config.rearmMarginVolts) * scale;
}

function volts(value: unknown): number | null {
  // 0 V is the "not available" placeholder of many trackers, not a reading.
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : null;
}

/** One decimal as on a dashboard, two when rounding would show the threshold itself (12.19 → 12.2). */
function formatVolts(voltage: number): string {
  const twoDecimals = voltage.toFixed(2);
  return twoDecimals.endsWith('0') ? voltage.toFixed(1) : twoDecimals;
}

function displayName(mode: BatteryMode, voltage: number | null): string {
  const shown = voltage === null ? '?' : formatVolts(voltage);
  return mode === 'charging' ? `Charging fault: ${shown} V while running` : `Battery low: ${shown} V (engine off)`;
}

/** Completes whatever timers have run their duration by `atMs`: clear first, then raise. */
function settle(state: BatteryState, atMs: number, config: BatteryConfig): BatteryState {
  let next = state;
  if (next.alert && next.recoverSinceMs !== null && atMs - next.recoverSinceMs >= config.rearmSeconds * 1000) {
    next = { ...next, alert: null, recoverSinceMs: null };
  }

  const mode = modeOf(next);
  const confirmMs = (mode === 'charging' ? config.chargingConfirmSeconds : config.restingConfirmSeconds) * 1000;
  const held = (since: number | null) => since !== null && atMs - since >= confirmMs;
  const severity: BatterySeverity | null =
    mode === 'resting' && held(next.criticalSinceMs) ? 'high' : held(next.lowSinceMs) ? 'medium' : null;
  if (!severity) return next;

  const current = next.alert;
  if (!current) {
    return {
      ...next,
      recoverSinceMs: null,
      alert: { severity, raisedBy: [mode], displayName: displayName(mode, next.lastVolts) },
    };
  }
  const raisedBy = current.raisedBy.includes(mode) ? current.raisedBy : [...current.raisedBy, mode];
  const escalates = severityRank[severity] > severityRank[current.severity];
  // The last sample is below this mode's threshold, hence below the re-arm voltage: not recovering.
  return {
    ...next,
    recoverSinceMs: null,
    alert: escalates
      ? { severity, raisedBy, displayName: displayName(mode, next.lastVolts) }
      : { ...current, raisedBy },
  };
}

function timerEndsMs(state: BatteryState, config: BatteryConfig): Array<number | null> {
  const confirmMs =
    (modeOf(state) === 'charging' ? config.chargingConfirmSeconds : config.restingConfirmSeconds) * 1000;
  const after = (since: number | null, ms: number) => (since === null ? null : since + ms);
  return [
    state.alert ? after(state.recoverSinceMs, config.rearmSeconds * 1000) : null,
    after(state.lowSinceMs, confirmMs),
    after(state.criticalSinceMs, confirmMs),
  ];
}

function applyEngineState(state: BatteryState, running: boolean, atMs: number): BatteryState {
  const wasRunning = state.running === true;
  if (running === wasRunning) return { ...state, running };
  return {
    ...state,
    running,
    engineOnAtMs: running ? atMs : state.engineOnAtMs,
    lowSinceMs: null,
    criticalSinceMs: null,
  };
}

function applyVoltage(state: BatteryState, voltage: number, atMs: number, config: BatteryConfig): BatteryState {
  const mode = modeOf(state);
  if (
    mode === 'charging' &&
    state.engineOnAtMs !== null &&
    atMs - state.engineOnAtMs < config.crankingIgnoreSeconds * 1000
  ) {
    return state;
  }
  const scale = voltScale(config);
  const below = (threshold: number) => voltage < threshold * scale - EPSILON_VOLTS;
  const since = (current: number | null, holds: boolean) => (holds ? (current ?? atMs) : null);

  const lowThreshold = mode === 'charging' ? config.chargingLowVolts : config.restingLowVolts;
  const recovering = state.alert !== null && voltage >= rearmVolts(state.alert.raisedBy, config) - EPSILON_VOLTS;
  return {
    ...state,
    lastVolts: voltage,
    lowSinceMs: since(state.lowSinceMs, below(lowThreshold)),
    criticalSinceMs: mode === 'resting' ? since(state.criticalSinceMs, below(config.restingCriticalVolts)) : null,
    recoverSinceMs: since(state.recoverSinceMs, recovering),
  };
}

export const batteryVoltageRule = engineGatedRule<BatteryState, BatteryConfig>({
  name: 'battery_voltage',
  signal: 'battery_voltage',
  alertKey: ALERT_KEY,
  alertType: ALERT_TYPE,
  initial: initialBatteryState,
  configOf: (config) => config.battery,
  parse: volts,
  settle,
  timerEndsMs,
  applyEngine: (state, running, atMs) => applyEngineState(state, running, atMs),
  applyValue: applyVoltage,
});
