/**
 * Tire pressure (docs/health.md "Sources" `tire_pressure_low`), one alert per tire: at or below
 * `criticalRatio` of the placard pressure: high (the FMVSS 138 telltale, 25 % under); at or below
 * `warnRatio`: low (early warning). Latched until the tire is back at `clearRatio` or more: the
 * gap between warn and clear absorbs a cold morning, so a tire hovering at the warning line raises
 * one alert, not one per reading. No durations: TPMS sensors already filter their readings.
 *
 * A tire whose value is null (sensor silent) or not a number keeps its state unchanged.
 * State is JSON: at most one small record per tire position.
 */
import type { AlertSeverity } from '../../domain/vehicle.js';
import type { HealthConfig } from '../../domain/health-config.js';
import type { ActiveAlert } from '../../domain/health.js';
import type { Rule } from '../types.js';
import { nonNegativeValue } from '../sample-values.js';

const tirePositions = ['front_left', 'front_right', 'rear_left', 'rear_right'] as const;
type TirePosition = (typeof tirePositions)[number];
type TireSeverity = Extract<AlertSeverity, 'low' | 'high'>;

export interface TireAlertState {
  severity: TireSeverity;
  /** The pressure that raised (or escalated) the alert, for the display name. */
  kpa: number;
}

export interface TirePressureState {
  /** The tires with an active alert. */
  tires: Partial<Record<TirePosition, TireAlertState>>;
}

const ALERT_TYPE = 'tire_pressure_low';
/** Placard × ratio is a float product (0.92 × 240); a reading exactly on it must count. */
const EPSILON_KPA = 1e-9;
const severityRank: Record<TireSeverity, number> = { low: 0, high: 1 };

type TireConfig = HealthConfig['tires'];

function initialTirePressureState(): TirePressureState {
  return { tires: {} };
}

/** One tire's next alert state for a reading. */
function nextTire(
  current: TireAlertState | undefined,
  pressure: number,
  config: TireConfig,
): TireAlertState | undefined {
  const placard = config.placardKpa;
  const atOrBelow = (ratio: number) => pressure <= ratio * placard + EPSILON_KPA;
  const severity: TireSeverity | null = atOrBelow(config.criticalRatio)
    ? 'high'
    : atOrBelow(config.warnRatio)
      ? 'low'
      : null;
  if (!current) return severity ? { severity, kpa: pressure } : undefined;
  if (severity) return severityRank[severity] > severityRank[current.severity] ? { severity, kpa: pressure } : current;
  // Between warn and clear the alert holds (hysteresis); at clear or above the tire re-arms.
  return pressure >= config.clearRatio * placard - EPSILON_KPA ? undefined : current;
}

function applyReading(state: TirePressureState, value: unknown, config: TireConfig): TirePressureState {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return state;
  const reading = value as Record<string, unknown>;
  const tires: TirePressureState['tires'] = {};
  for (const position of tirePositions) {
    const pressure = nonNegativeValue(reading[position]);
    const next = pressure === null ? state.tires[position] : nextTire(state.tires[position], pressure, config);
    if (next) tires[position] = next;
  }
  return { tires };
}

function displayName(position: TirePosition, pressure: number, placardKpa: number): string {
  return `Tire pressure low: ${position.replace('_', ' ')} ${Math.round(pressure)} kPa (placard ${Math.round(placardKpa)})`;
}

function alertsOf(state: TirePressureState, config: TireConfig): ActiveAlert[] {
  const alerts: ActiveAlert[] = [];
  for (const position of tirePositions) {
    const tire = state.tires[position];
    if (!tire) continue;
    alerts.push({
      key: position,
      severity: tire.severity,
      type: ALERT_TYPE,
      display_name: displayName(position, tire.kpa, config.placardKpa),
      due_date: null,
      due_miles_remaining: null,
    });
  }
  return alerts;
}

export const tirePressureRule: Rule<TirePressureState> = {
  name: 'tire_pressure',
  initial: initialTirePressureState,
  evaluate(prev, input, config) {
    const tires = config.tires;
    let state = prev;
    // Without a usable placard pressure no ratio means anything: keep what holds.
    if (Number.isFinite(tires.placardKpa) && tires.placardKpa > 0) {
      for (const sample of input.samples) {
        if (sample.signal === 'tire_pressure_kpa') state = applyReading(state, sample.value, tires);
      }
    }
    return { state, alerts: alertsOf(state, tires), recheckAtMs: null };
  },
};
