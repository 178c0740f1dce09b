/**
 * What the rules that depend on the engine (battery, coolant, fuel) share: reading the normalized
 * `engine_state`, their single alert, and the evaluation loop.
 */
import type { AlertSeverity } from '../../domain/vehicle.js';
import type { HealthConfig } from '../../domain/health-config.js';
import type { ActiveAlert } from '../../domain/health.js';
import { earliestAfter } from '../recheck.js';
import type { Rule } from '../types.js';

/** `on` and `idle` run the engine, `off` stops it; anything else says nothing. */
export function engineRunning(value: unknown): boolean | null {
  if (value === 'on' || value === 'idle') return true;
  if (value === 'off') return false;
  return null;
}

/** The rule's one alert while an episode is raised, else none. */
function episodeAlert(
  key: string,
  type: string,
  alert: { severity: AlertSeverity; displayName: string } | null,
): ActiveAlert[] {
  if (!alert) return [];
  return [
    { key, severity: alert.severity, type, display_name: alert.displayName, due_date: null, due_miles_remaining: null },
  ];
}

/**
 * A rule about one numeric signal whose condition depends on the engine. The parts say how the
 * state changes; the shared loop feeds samples in order, settles timers before and after each
 * change (a condition held right up to it) and at `now`, and reports the episode's alert and when
 * the next running timer runs out (a timer that ran out by `now` is settled: it changes nothing more).
 */
export interface EngineGatedParts<S extends { alert: { severity: AlertSeverity; displayName: string } | null }, C> {
  name: string;
  signal: string;
  alertKey: string;
  alertType: string;
  initial: () => S;
  configOf: (config: HealthConfig) => C;
  /** The signal's value, or null to skip the sample. */
  parse: (value: unknown) => number | null;
  /** Completes the timers that ran out by `atMs`. */
  settle: (state: S, atMs: number, config: C) => S;
  /** When each running timer runs out (epoch ms; null for a timer not running): what `settle` would complete next. */
  timerEndsMs: (state: S, config: C) => Array<number | null>;
  applyEngine: (state: S, running: boolean, atMs: number, config: C) => S;
  applyValue: (state: S, value: number, atMs: number, config: C) => S;
}

export function engineGatedRule<S extends { alert: { severity: AlertSeverity; displayName: string } | null }, C>(
  parts: EngineGatedParts<S, C>,
): Rule<S> {
  return {
    name: parts.name,
    initial: parts.initial,
    evaluate(prev, input, healthConfig, now) {
      const config = parts.configOf(healthConfig);
      let state = prev;
      // In the engine's order: oldest first, the engine state first at equal times (types.ts).
      for (const sample of input.samples) {
        const atMs = sample.recordedAt.getTime();
        if (!Number.isFinite(atMs)) continue;
        if (sample.signal === 'engine_state') {
          const running = engineRunning(sample.value);
          if (running === null) continue;
          state = parts.applyEngine(parts.settle(state, atMs, config), running, atMs, config);
        } else if (sample.signal === parts.signal) {
          const value = parts.parse(sample.value);
          if (value === null) continue;
          state = parts.settle(parts.applyValue(parts.settle(state, atMs, config), value, atMs, config), atMs, config);
        }
      }
      state = parts.settle(state, now.getTime(), config);
      return {
        state,
        alerts: episodeAlert(parts.alertKey, parts.alertType, state.alert),
        recheckAtMs: earliestAfter(now.getTime(), parts.timerEndsMs(state, config)),
      };
    },
  };
}
