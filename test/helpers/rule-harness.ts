/** Driving one health rule in unit tests: timed samples, and a vehicle that keeps the rule's state as the worker does. */
import { expect } from 'vitest';
import { defaultHealthConfig, type HealthConfig } from '../../src/domain/health-config.js';
import type { ActiveAlert } from '../../src/domain/health.js';
import type { Rule, RuleInput, RuleResult } from '../../src/health/types.js';
import { msPerDay } from '../../src/domain/units.js';
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
      const now = at(nowSeconds);
      const result = rule.evaluate(state, input, config, now);
      state = JSON.parse(JSON.stringify(result.state)) as S;
      expect(state).toEqual(result.state);
      expectNoChangeBeforeRecheck(rule, state, { ...input, samples: [] }, config, now.getTime(), result);
      return result.alerts;
    },
    get state() {
      return state;
    },
  };
}

/**
 * The recheck contract (health/recheck.ts), checked after every evaluation: without new samples
 * the alerts stay as they are until the time the rule named (at points before it), or for a year
 * when it named none. The sweep skips the vehicle until then, so a later change would be missed.
 */
export function expectNoChangeBeforeRecheck<S>(
  rule: Rule<S>,
  state: S,
  input: RuleInput,
  config: HealthConfig,
  nowMs: number,
  result: RuleResult<S>,
): void {
  const recheck = result.recheckAtMs;
  if (recheck !== null) expect(recheck).toBeGreaterThan(nowMs);
  const probes =
    recheck === null
      ? [nowMs + 1, nowMs + msPerDay, nowMs + 365 * msPerDay]
      : [nowMs + 1, Math.floor((nowMs + recheck) / 2), recheck - 1].filter((time) => time > nowMs && time < recheck);
  for (const time of probes) {
    const later = rule.evaluate(state, input, config, new Date(time));
    expect(later.alerts, `${rule.name} changed at ${new Date(time).toISOString()}, before its recheck`).toEqual(
      result.alerts,
    );
  }
}
