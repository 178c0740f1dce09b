/**
 * The health engine: runs the link rule, then every rule of the registry in order, over a
 * vehicle's new samples, and works out what changed. Pure: the health worker loads the inputs and
 * persists the result.
 */
import type { LinkBroken, VehicleAlert, VehicleHealth } from '../domain/vehicle.js';
import type { HealthConfig } from '../domain/health-config.js';
import { healthRules } from './registry.js';
import { earliestAfter } from './recheck.js';
import { rollUpHealth } from './roll-up.js';
import { averageDailyKm, evaluateLink, initialLinkState } from './rules/link-broken.js';
import type { ActiveAlert, HealthEvent, HealthState } from '../domain/health.js';
import type { RuleSample } from '../domain/sample.js';
import type { VehicleFacts } from './types.js';

export interface HealthEvaluation {
  state: HealthState;
  health: VehicleHealth;
  linkBroken: LinkBroken | null;
  /** The trusted odometer (a conflicting tracker reading never becomes it). */
  odometer: { km: number; at: Date; source: string } | null;
  events: HealthEvent[];
  /**
   * The earliest time (epoch ms) at which the result could change without new samples or input;
   * null: never by time alone. At or before `now`: at the next sweep.
   */
  recheckAtMs: number | null;
}

function initialHealthState(): HealthState {
  return { link: initialLinkState(), rules: {}, alerts: [], status: 'unknown', linkReason: null };
}

/**
 * Where a vehicle's new owner starts (docs/ownership.md): the link state, which holds the trusted
 * odometer (it travels with the car), and nothing the previous owner's readings made: no rule
 * state, no alerts, status unknown, no link reason (the transfer lets the tracker go).
 */
export function healthStateForNewOwner(previous: HealthState | null): HealthState {
  return { ...initialHealthState(), link: previous?.link ?? initialLinkState() };
}

const severityRank = { critical: 0, high: 1, medium: 2, low: 3, info: 4 } as const;

const alertId = (alert: ActiveAlert) => `${alert.type}\u0000${alert.key}`;

function present(alert: ActiveAlert): VehicleAlert {
  return {
    severity: alert.severity,
    type: alert.type,
    display_name: alert.display_name,
    due_date: alert.due_date,
    due_miles_remaining: alert.due_miles_remaining,
  };
}

function diffAlerts(previous: readonly ActiveAlert[], current: readonly ActiveAlert[]): HealthEvent[] {
  const before = new Map(previous.map((a) => [alertId(a), a]));
  const after = new Map(current.map((a) => [alertId(a), a]));
  const events: HealthEvent[] = [];
  for (const [id, alert] of after) {
    const old = before.get(id);
    if (!old) events.push({ kind: 'alert_opened', payload: { ...alert } });
    else if (old.severity !== alert.severity)
      events.push({ kind: 'alert_changed', payload: { ...alert, previous_severity: old.severity } });
  }
  for (const [id, alert] of before) {
    if (!after.has(id)) events.push({ kind: 'alert_resolved', payload: { ...alert } });
  }
  return events;
}

/** The order every rule reads samples in (types.ts): oldest first, the engine state first at equal times. */
export function feedOrder(samples: readonly RuleSample[]): RuleSample[] {
  const rank = (sample: RuleSample) => (sample.signal === 'engine_state' ? 0 : 1);
  return [...samples].sort((a, b) => a.recordedAt.getTime() - b.recordedAt.getTime() || rank(a) - rank(b));
}

/**
 * An evaluation owed only to a refresh without cascade (docs/health.md "Updates, events and
 * cascade": no downstream processing because of it): the link rule alone follows the new samples, so the
 * trusted odometer and the link move; no alert rule is fed, and the alerts, the status and what
 * the next evaluation compares with (`alerts`, `status`, `linkReason`) stay as the last full
 * evaluation left them. Nothing is reported: no events.
 */
export function evaluateVehicleState(
  previous: HealthState | null,
  samples: readonly RuleSample[],
  telematicsProvider: string | null,
  config: HealthConfig,
  now: Date,
): HealthEvaluation {
  const prev = previous ?? initialHealthState();
  const link = evaluateLink(prev.link, feedOrder(samples), telematicsProvider, config, now);
  return {
    state: { ...prev, link: link.state },
    health: { status: prev.status, alerts: prev.alerts.map(present) },
    linkBroken: link.linkBroken,
    odometer: link.odometer,
    events: [],
    // The alert rules did not run: the next sweep evaluates the vehicle fully.
    recheckAtMs: now.getTime(),
  };
}

/**
 * The full evaluation: the link rule, then every alert rule over `samples`. `stateOnly` are new
 * samples that move the vehicle state but report nothing (a refresh without cascade stored them):
 * the link rule reads them with the others, the alert rules never do.
 */
export function evaluateVehicleHealth(
  previous: HealthState | null,
  samples: readonly RuleSample[],
  vehicle: VehicleFacts,
  config: HealthConfig,
  now: Date,
  hasTelemetry: boolean,
  stateOnly: readonly RuleSample[] = [],
): HealthEvaluation {
  const prev = previous ?? initialHealthState();
  const ordered = feedOrder(samples);
  const linkSamples = stateOnly.length > 0 ? feedOrder([...samples, ...stateOnly]) : ordered;
  const link = evaluateLink(prev.link, linkSamples, vehicle.telematicsProvider, config, now);
  const input = {
    samples: ordered,
    vehicle,
    odometer: link.odometer ? { km: link.odometer.km, at: link.odometer.at } : null,
    firstOdometer: link.state.first ? { km: link.state.first.km, at: new Date(link.state.first.at) } : null,
    linkBroken: link.linkBroken,
    averageDailyKm: averageDailyKm(link.state, now),
  };

  const rules: Record<string, unknown> = {};
  const alerts: ActiveAlert[] = [];
  const recheckTimes = [link.recheckAtMs];
  for (const rule of healthRules) {
    const result = rule.evaluate(prev.rules[rule.name] ?? rule.initial(), input, config, now);
    rules[rule.name] = result.state;
    alerts.push(...result.alerts);
    recheckTimes.push(result.recheckAtMs);
  }
  alerts.sort(
    (a, b) =>
      severityRank[a.severity] - severityRank[b.severity] || a.type.localeCompare(b.type) || a.key.localeCompare(b.key),
  );

  const status = rollUpHealth(alerts, link.linkBroken, hasTelemetry || samples.length > 0);
  const events = diffAlerts(prev.alerts, alerts);
  if (status !== prev.status) events.push({ kind: 'status_changed', payload: { from: prev.status, to: status } });
  const linkReason = link.linkBroken?.reason ?? null;
  if (linkReason !== prev.linkReason) {
    events.push({
      kind: 'link_changed',
      payload: { from: prev.linkReason, to: linkReason, link_broken: link.linkBroken },
    });
  }

  return {
    state: { link: link.state, rules, alerts, status, linkReason },
    health: { status, alerts: alerts.map(present) },
    linkBroken: link.linkBroken,
    odometer: link.odometer,
    events,
    recheckAtMs: earliestAfter(now.getTime(), recheckTimes),
  };
}
