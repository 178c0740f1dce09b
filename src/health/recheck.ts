/**
 * When a vehicle's health must be evaluated although nothing new arrived (docs/health.md "The
 * sweep"). Each evaluation stores the earliest time its result can change by time alone (a timer
 * completing, a due date reached: each rule says, `RuleResult.recheckAtMs`); the sweep evaluates a
 * vehicle once that time is reached. Besides, each sweep evaluates in full one quarter of the
 * fleet by vehicle id, in turn, so every vehicle is evaluated within the hour whatever its rules
 * said: input an evaluation job should have followed and did not (a service entry while Redis was
 * away) and a rule's changed idea of time still reach it.
 */
import { healthSweepIntervalMs as sweepIntervalMs } from '../domain/health-sweep.js';
import { msPerDay } from '../domain/units.js';

export { sweepIntervalMs };
/** Sweeps in which every vehicle is evaluated in full once: a quarter of the fleet each, an hour in all. */
export const fullEvaluationSweeps = 4;

/** The share of the fleet the sweep at `nowMs` evaluates in full: vehicles whose id's last byte, modulo the sweeps, is this. */
export function fullEvaluationShare(nowMs: number): number {
  return Math.floor(nowMs / sweepIntervalMs) % fullEvaluationSweeps;
}

/** The earliest of `times` after `nowMs`, or null when none is (times at or before it already hold). */
export function earliestAfter(nowMs: number, times: Iterable<number | null>): number | null {
  let earliest: number | null = null;
  for (const time of times) {
    if (time !== null && time > nowMs && (earliest === null || time < earliest)) earliest = time;
  }
  return earliest;
}

/** The next UTC midnight after `nowMs`: when a date that follows today moves. */
export function nextUtcMidnightMs(nowMs: number): number {
  return (Math.floor(nowMs / msPerDay) + 1) * msPerDay;
}
