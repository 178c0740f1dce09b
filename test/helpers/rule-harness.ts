/** Driving one health rule in unit tests: timed samples, and a vehicle that keeps the rule's state as the worker does. */
import { expect } from 'vitest';
import { defaultHealthConfig, type HealthConfig } from '../../src/domain/health-config.js';
import type { ActiveAlert } from '../../src/domain/health.js';
import type { Rule } from '../../src/health/types.js';
import type { RuleSample } from '../../src/domain/sample.js';

export const t0 = Date.parse('2026-11-22T06:00:00Z');
/** `seconds` after t0. */
export const at = (seconds: number) => new Date(t0 + seconds * 1000);

/** One sample of `signal`, `seconds` after t0. */
export function sample(signal: string, seconds: number, value: unknown): RuleSample {
  return { signal, recordedAt: at(seconds), value, source: 'generic' };
}

/**
 * Feeds batches in order, evaluating at `nowSeconds` after t0, carrying the state through JSON as
 * the worker stores it (jsonb) and checking it survives the round trip.
 */
export function ruleVehicle<S>(rule: Rule<S>, config: HealthConfig = defaultHealthConfig) {
  let state = rule.initial();
  return {
    feed(samples: RuleSample[], nowSeconds = 0): ActiveAlert[] {
      const input = {
        samples,
        vehicle: { telematicsProvider: 'generic', createdAt: at(0), lastServices: {} },
        odometer: null,
        averageDailyKm: null,
        firstOdometer: null,
        linkBroken: null,
      };
      const result = rule.evaluate(state, input, config, at(nowSeconds));
      state = JSON.parse(JSON.stringify(result.state)) as S;
      expect(state).toEqual(result.state);
      return result.alerts;
    },
    get state() {
      return state;
    },
  };
}
