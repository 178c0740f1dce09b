import { describe, expect, it } from 'vitest';
import { milesToKm } from '../../../src/domain/units.js';
import { defaultHealthConfig } from '../../../src/domain/health-config.js';
import { evaluateVehicleHealth, evaluateVehicleState } from '../../../src/health/evaluate.js';
import { type HealthState } from '../../../src/domain/health.js';
import type { RuleSample } from '../../../src/domain/sample.js';
import type { VehicleFacts } from '../../../src/health/types.js';
import { at, sample } from '../../helpers/rule-harness.js';

const day = 86_400;

/** Successive evaluations of one vehicle, its state carried through JSON as the worker stores it. */
function engineVehicle(facts: VehicleFacts) {
  let state: HealthState | null = null;
  return (samples: RuleSample[], nowSeconds: number) => {
    const result = evaluateVehicleHealth(state, samples, facts, defaultHealthConfig, at(nowSeconds), true);
    state = JSON.parse(JSON.stringify(result.state)) as HealthState;
    return result.events.map((event) => ({ kind: event.kind, ...event.payload }));
  };
}

describe('health engine events', () => {
  it('reports alerts opened, changed and resolved, status changes and link changes, each once', () => {
    const evaluate = engineVehicle({ telematicsProvider: 'generic', createdAt: at(0), lastServices: {} });
    expect(
      evaluate([sample('odometer_km', 0, 1000), sample('engine_state', 0, 'on'), sample('fuel_percent', 0, 15)], 60),
    ).toEqual([{ kind: 'status_changed', from: 'unknown', to: 'ok' }]);
    // Low fuel held for the 120 s confirmation.
    expect(evaluate([sample('fuel_percent', 130, 15)], 200)).toEqual([
      expect.objectContaining({
        kind: 'alert_opened',
        type: 'fuel_level_low',
        severity: 'low',
        display_name: 'Fuel low: 15%',
      }),
      { kind: 'status_changed', from: 'ok', to: 'needs_attention' },
    ]);
    // Nothing new: no events.
    expect(evaluate([], 250)).toEqual([]);
    expect(evaluate([sample('fuel_percent', 300, 7)], 500)).toEqual([
      expect.objectContaining({
        kind: 'alert_changed',
        type: 'fuel_level_low',
        severity: 'medium',
        previous_severity: 'low',
      }),
    ]);
    // Refuelled above the re-arm level.
    expect(evaluate([sample('fuel_percent', 600, 30)], 700)).toEqual([
      expect.objectContaining({ kind: 'alert_resolved', type: 'fuel_level_low', severity: 'medium' }),
      { kind: 'status_changed', from: 'needs_attention', to: 'ok' },
    ]);
    // No odometer for more than 7 days: the link turns stale without any new sample.
    expect(evaluate([], 8 * day)).toEqual([
      { kind: 'status_changed', from: 'ok', to: 'needs_attention' },
      {
        kind: 'link_changed',
        from: null,
        to: 'stale',
        link_broken: { reason: 'stale', since: at(0).toISOString(), tracker_km: null },
      },
    ]);
  });

  it('marks an overdue maintenance alert as overdue in its event (the runs stage opens a request from it)', () => {
    const lastServices = { oil_change: { at: at(-30 * day), odometerKm: milesToKm(10_000) } };
    const evaluate = engineVehicle({ telematicsProvider: null, createdAt: at(-400 * day), lastServices });
    const events = evaluate([sample('odometer_km', 0, milesToKm(15_600))], 60);
    expect(events).toContainEqual(
      expect.objectContaining({ kind: 'alert_opened', type: 'oil_change', overdue: true, due_miles_remaining: -600 }),
    );
    // Due soon is not overdue.
    const soon = engineVehicle({ telematicsProvider: null, createdAt: at(-400 * day), lastServices });
    expect(soon([sample('odometer_km', 0, milesToKm(14_700))], 60)).toContainEqual(
      expect.objectContaining({ kind: 'alert_opened', type: 'oil_change', overdue: false, due_miles_remaining: 300 }),
    );
  });

  it('without cascade only the link follows: the odometer and link move, alerts and status stay, nothing is reported', () => {
    const facts = { telematicsProvider: 'generic', createdAt: at(0), lastServices: {} };
    const first = evaluateVehicleHealth(
      null,
      [sample('odometer_km', 0, 1000), sample('fuel_percent', 0, 50), sample('engine_state', 0, 'on')],
      facts,
      defaultHealthConfig,
      at(60),
      true,
    );
    expect(first.health.status).toBe('ok');
    // Eight days later a refresh without cascade brings an overheating engine and a new odometer.
    const quiet = evaluateVehicleState(
      first.state,
      [sample('odometer_km', 8 * day, 1100), sample('coolant_temp_c', 8 * day, 120)],
      'generic',
      defaultHealthConfig,
      at(8 * day + 60),
    );
    expect(quiet.events).toEqual([]);
    expect(quiet.odometer).toEqual({ km: 1100, at: at(8 * day), source: 'generic' });
    expect(quiet.linkBroken).toBeNull();
    expect(quiet.health).toEqual(first.health);
    expect(quiet.state).toEqual({ ...first.state, link: quiet.state.link });
    // The evaluation with cascade that follows judges what it is fed, never the samples passed over.
    const next = evaluateVehicleHealth(quiet.state, [], facts, defaultHealthConfig, at(8 * day + 120), true);
    expect(next.events).toEqual([]);
    expect(next.health).toEqual(first.health);
  });

  it("a full evaluation gives a refresh's samples to the link rule alone, and the others to every rule", () => {
    const facts = { telematicsProvider: 'generic', createdAt: at(0), lastServices: {} };
    const first = evaluateVehicleHealth(
      null,
      [sample('odometer_km', 0, 1000), sample('engine_state', 0, 'on')],
      facts,
      defaultHealthConfig,
      at(60),
      true,
    );
    // A push's low fuel, and a refresh's overheating engine and newer odometer, read in one evaluation.
    const result = evaluateVehicleHealth(
      first.state,
      [sample('fuel_percent', 100, 5), sample('fuel_percent', 300, 5)],
      facts,
      defaultHealthConfig,
      at(360),
      true,
      [sample('odometer_km', 200, 1010), sample('coolant_temp_c', 200, 120)],
    );
    expect(result.odometer).toEqual({ km: 1010, at: at(200), source: 'generic' });
    expect(result.health.alerts.map((a) => a.type)).toEqual(['fuel_level_low']);
    expect(result.events.filter((e) => e.kind === 'alert_opened').map((e) => e.payload.type)).toEqual([
      'fuel_level_low',
    ]);
  });
});
