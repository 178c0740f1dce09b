/**
 * The monitoring engine: runs the detectors of a subscription's kinds (registry.ts) over one
 * evaluation's input and collects their detections. Pure: the monitoring stage of the health
 * worker loads the state and input and stores the result; the dry-run runs it over history.
 */
import { feedOrder } from '../health/evaluate.js';
import type { MonitoringKind, MonitoringOptions } from '../domain/monitoring-kinds.js';
import { monitoringDetectors } from './registry.js';
import type { Detection, MonitoringInput } from './types.js';

/** Each subscribed kind's detector state, by kind (JSON; stored as `detector_state`). */
export type MonitoringState = Record<string, unknown>;

/**
 * The signals the detectors read from samples beyond the health rules' (src/db/health.ts
 * `ruleSignals`), which the stage must load for subscribed vehicles too. Some overlap the rules'.
 */
export const monitoringSignals: readonly string[] = ['speed_kph', 'location', 'engine_state', 'fuel_percent'];

/**
 * One evaluation of one subscription: only its kinds run, each from its own previous state (or a
 * fresh one); a kind no longer subscribed drops its state. The samples are put in the rules' feed
 * order first (oldest first, `engine_state` first at equal times), whatever order the caller has.
 * Detections come oldest first (by `occurredAt`; at equal times in the registry's order).
 */
export function detectMonitoringEvents(
  prev: MonitoringState | null,
  input: MonitoringInput,
  subscription: { kinds: readonly MonitoringKind[]; options: MonitoringOptions },
  now: Date,
): { state: MonitoringState; detections: Detection[] } {
  const wanted = new Set(subscription.kinds);
  const state: MonitoringState = {};
  const detections: Detection[] = [];
  const ordered: MonitoringInput = { ...input, samples: feedOrder(input.samples) };
  for (const detector of monitoringDetectors) {
    if (!wanted.has(detector.kind)) continue;
    const previous = prev?.[detector.kind];
    const result = detector.detect(previous ?? detector.initial(), ordered, subscription.options, now);
    state[detector.kind] = result.state;
    detections.push(...result.detections);
  }
  // Array.prototype.sort is stable: equal times keep the registry's order.
  detections.sort((a, b) => a.occurredAt.getTime() - b.occurredAt.getTime());
  return { state, detections };
}
