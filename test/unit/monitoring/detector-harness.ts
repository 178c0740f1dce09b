/** Driving one monitoring detector in unit tests: timed inputs, the state carried through JSON as the worker stores it. */
import { expect } from 'vitest';
import type { ActiveAlert } from '../../../src/domain/health.js';
import { defaultMonitoringOptions, type MonitoringOptions } from '../../../src/domain/monitoring-kinds.js';
import type { Detection, Detector, MonitoringInput } from '../../../src/monitoring/types.js';
import type { EventSample } from '../../../src/domain/sample.js';
import { at } from '../../helpers/rule-harness.js';

export { at, sample, t0 } from '../../helpers/rule-harness.js';

export interface InputParts {
  samples?: MonitoringInput['samples'];
  events?: MonitoringInput['events'];
  alerts?: readonly ActiveAlert[];
  odometer?: MonitoringInput['health']['odometer'];
  linkBroken?: MonitoringInput['health']['linkBroken'];
  geofences?: MonitoringInput['geofences'];
}

export function monitoringInput(parts: InputParts = {}): MonitoringInput {
  return {
    samples: parts.samples ?? [],
    events: parts.events ?? [],
    health: {
      alerts: parts.alerts ?? [],
      odometer: parts.odometer ?? null,
      linkBroken: parts.linkBroken ?? null,
      lastServiceAt: null,
    },
    geofences: parts.geofences ?? [],
  };
}

/** A provider event `seconds` after t0. */
export function event(kind: EventSample['kind'], seconds: number, g: number | null = null): EventSample {
  return { kind, recordedAt: at(seconds), g };
}

/**
 * Feeds inputs in order, detecting at `nowSeconds` after t0, carrying the state through JSON and
 * checking it survives the round trip.
 */
export function detectorVehicle<S>(detector: Detector<S>, options: Partial<MonitoringOptions> = {}) {
  let state = detector.initial();
  const merged = { ...defaultMonitoringOptions, ...options };
  return {
    feed(parts: InputParts, nowSeconds = 0): Detection[] {
      const result = detector.detect(state, monitoringInput(parts), merged, at(nowSeconds));
      state = JSON.parse(JSON.stringify(result.state)) as S;
      expect(state).toEqual(result.state);
      for (const detection of result.detections) expect(detection.kind).toBe(detector.kind);
      return result.detections;
    },
    get state() {
      return state;
    },
  };
}

/** The (occurredAt seconds after t0, severity, key) of each detection: what most assertions compare. */
export function brief(detections: readonly Detection[]) {
  return detections.map((d) => ({
    at: (d.occurredAt.getTime() - at(0).getTime()) / 1000,
    severity: d.severity,
    key: d.key,
  }));
}
