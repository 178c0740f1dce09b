/**
 * The health rule contract. A rule is a pure function of (previous state, new samples, config,
 * now) → (new state, active alerts). No I/O, no clock: `now` is an argument. Rules are listed in
 * one ordered registry (src/health/registry.ts); the same shape serves the monitoring event
 * detectors (docs/monitoring.md).
 *
 * Terminology:
 * - sample: a reading fed to the rules, oldest first (at equal times `engine_state` first, so a
 *   reading belongs to the engine state of its moment), always newer than anything fed before of
 *   its signal (the watermark is per signal: src/evaluation/evaluate-vehicles.ts).
 * - active alert: a condition that holds now; the engine compares successive sets to tell when
 *   an alert opened or resolved, so a rule reports what holds, not what changed.
 * - episode: a condition continuously true (with hysteresis); a rule raises at most one alert per
 *   episode and re-arms only after the condition has cleared.
 */
import type { ActiveAlert } from '../domain/health.js';
import type { RuleSample } from '../domain/sample.js';
import type { LinkBroken } from '../domain/vehicle.js';
import type { HealthConfig } from '../domain/health-config.js';

/** Facts about the vehicle that are not samples, loaded by the worker for every evaluation. */
export interface VehicleFacts {
  telematicsProvider: string | null;
  /** When we started tracking the vehicle (maintenance baseline without service history). */
  createdAt: Date;
  /** Last service of each maintenance type: from completed runs' items and operator service entries. */
  lastServices: Record<string, { at: Date; odometerKm: number | null }>;
}

export interface RuleInput {
  samples: readonly RuleSample[];
  vehicle: VehicleFacts;
  /** The trusted odometer after the link rule ran this evaluation (rules after it in the registry may use it). */
  odometer: { km: number; at: Date } | null;
  /** The first trusted odometer: where maintenance counts from without service history. */
  firstOdometer: { km: number; at: Date } | null;
  /** The tracker link as the link rule settled it (a conflict makes distances unreliable). */
  linkBroken: LinkBroken | null;
  /** Average distance per day over the last 30 days, from the trusted odometer; null when unknown. */
  averageDailyKm: number | null;
}

export interface RuleResult<S> {
  state: S;
  alerts: ActiveAlert[];
  /**
   * The earliest time after `now` (epoch ms) at which the rule's alerts could differ without new
   * samples or other new input: a timer that completes, a due date reached. Null: never by time
   * alone. May be early, never late: the sweep skips the vehicle until then (docs/health.md "The sweep").
   */
  recheckAtMs: number | null;
}

export interface Rule<S> {
  name: string;
  initial: () => S;
  evaluate(prev: S, input: RuleInput, config: HealthConfig, now: Date): RuleResult<S>;
}
