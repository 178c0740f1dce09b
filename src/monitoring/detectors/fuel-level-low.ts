/**
 * fuel_level_low (docs/health.md "Sources"): the health fuel rule (src/health/rules/
 * fuel-level.ts: at or below the level for 2 min with the engine running or its state unknown;
 * medium at or below 7 %) run with the subscription's threshold: low at or below
 * `options.fuelLevelPercent`, re-armed by a refuel to the threshold + 5 points or more. One event
 * at the onset of each episode, at the sample (or `now`, in a sweep) that completed the
 * confirmation. The rule is fed one sample at a time so each onset has its reading.
 */
import { defaultHealthConfig, type HealthConfig } from '../../domain/health-config.js';
import { fuelLevelRule, type FuelState } from '../../health/rules/fuel-level.js';
import type { RuleInput } from '../../health/types.js';
import type { RuleSample } from '../../domain/sample.js';
import { freshSamples, type Watermarks } from '../fresh.js';
import type { MonitoringOptions } from '../../domain/monitoring-kinds.js';
import type { Detection, Detector } from '../types.js';

/** A refuel this many points above the threshold ends the episode (the health rule's 15 → 20 %). */
export const fuelRearmPoints = 5;

export interface FuelLevelLowState {
  watermarks: Watermarks;
  rule: FuelState;
}

function ruleConfig(options: MonitoringOptions): HealthConfig {
  const lowPercent = options.fuelLevelPercent;
  const fuel = defaultHealthConfig.fuel;
  return {
    ...defaultHealthConfig,
    fuel: {
      ...fuel,
      lowPercent,
      criticalPercent: Math.min(fuel.criticalPercent, lowPercent),
      rearmPercent: lowPercent + fuelRearmPoints,
    },
  };
}

/** The fuel rule reads only its samples; the rest of a health input does not apply here. */
function ruleInput(samples: RuleSample[], at: Date): RuleInput {
  return {
    samples,
    vehicle: { telematicsProvider: null, createdAt: at, lastServices: {} },
    odometer: null,
    firstOdometer: null,
    linkBroken: null,
    averageDailyKm: null,
  };
}

export const fuelLevelLowDetector: Detector<FuelLevelLowState> = {
  kind: 'fuel_level_low',
  initial: () => ({ watermarks: {}, rule: fuelLevelRule.initial() }),
  detect(prev, input, options, now) {
    const fresh = freshSamples(input.samples, ['engine_state', 'fuel_percent'], prev.watermarks, now);
    const config = ruleConfig(options);
    let rule = prev.rule;
    const detections: Detection[] = [];
    const step = (samples: RuleSample[], at: Date) => {
      const wasActive = rule.alert !== null;
      const result = fuelLevelRule.evaluate(rule, ruleInput(samples, at), config, at);
      rule = result.state;
      const alert = result.alerts[0];
      if (wasActive || !alert) return;
      detections.push({
        kind: 'fuel_level_low',
        key: '',
        occurredAt: at,
        severity: alert.severity,
        description: `Fuel at ${Math.round(rule.lastPercent ?? 0)}%, at or below ${options.fuelLevelPercent}%.`,
      });
    };
    for (const sample of fresh.samples) step([sample], sample.recordedAt);
    step([], now);
    return { state: { watermarks: fresh.watermarks, rule }, detections };
  },
};
