/**
 * excessive_idling (docs/health.md "Sources"): the engine runs (`engine_state` on or idle), the
 * vehicle does not move (last `speed_kph` below 2 km/h, or `engine_state` idle when no speed is
 * known, and every fix within 50 m of where the idle began) for `options.idleMinutes`. Once per
 * episode, re-armed when the engine stops or the vehicle moves (a fix beyond 50 m while still
 * standing still starts the next episode at the new place). The threshold is checked at every
 * sample and at `now`, so the sweep fires it without new samples (the last reading holds until
 * the next, as in the health rules). occurredAt = the moment the idle reached the threshold.
 * Severity low; medium when the threshold itself is 30 min or more.
 */
import { engineRunning } from '../../health/rules/engine-state.js';
import { finiteValue } from '../../health/sample-values.js';
import { freshSamples, type Watermarks } from '../fresh.js';
import { distanceM } from '../../domain/geo.js';
import type { Detection, Detector, MonitoringInput } from '../types.js';
import type { MonitoringOptions } from '../../domain/monitoring-kinds.js';

/** Slower than this is standing still (GPS speed jitter of a parked vehicle). */
export const idleMaxKph = 2;
/** A fix farther than this from where the idle began is movement (GPS jitter stays within it). */
export const idleRadiusM = 50;
/** An idle threshold at least this long makes the event medium rather than low [U]. */
const mediumIdleMinutes = 30;

const signals = ['engine_state', 'speed_kph', 'location'] as const;

export interface IdlingState {
  watermarks: Watermarks;
  /** The last engine state: 'on' | 'idle' | 'off', or null before the first. */
  engine: string | null;
  speedKph: number | null;
  position: { lat: number; lon: number } | null;
  /** Where the current idle began (the position known then, or the first fix after). */
  anchor: { lat: number; lon: number } | null;
  idleSinceMs: number | null;
  fired: boolean;
}

function idleNow(state: IdlingState): boolean {
  if (engineRunning(state.engine) !== true) return false;
  return state.speedKph !== null ? state.speedKph < idleMaxKph : state.engine === 'idle';
}

function positionOf(value: unknown): { lat: number; lon: number } | null {
  if (typeof value !== 'object' || value === null) return null;
  const { lat, lon } = value as Record<string, unknown>;
  return typeof lat === 'number' && typeof lon === 'number' && Number.isFinite(lat) && Number.isFinite(lon)
    ? { lat, lon }
    : null;
}

function apply(state: IdlingState, signal: string, value: unknown): IdlingState {
  if (signal === 'engine_state') return engineRunning(value) === null ? state : { ...state, engine: value as string };
  if (signal === 'speed_kph') {
    const kph = finiteValue(value);
    return kph === null || kph < 0 ? state : { ...state, speedKph: kph };
  }
  const position = positionOf(value);
  return position ? { ...state, position } : state;
}

/** Starts, continues or ends the idle episode after a change at `atMs`. */
function track(state: IdlingState, atMs: number): IdlingState {
  const moved =
    state.anchor !== null && state.position !== null && distanceM(state.anchor, state.position) > idleRadiusM;
  if (!idleNow(state)) return { ...state, idleSinceMs: null, anchor: null, fired: false };
  // A move ends the episode; standing still again at the new place starts the next one there.
  if (state.idleSinceMs === null || moved) return { ...state, idleSinceMs: atMs, anchor: state.position, fired: false };
  return state.anchor === null ? { ...state, anchor: state.position } : state;
}

function settle(state: IdlingState, atMs: number, options: MonitoringOptions, detections: Detection[]): IdlingState {
  if (state.idleSinceMs === null || state.fired) return state;
  const thresholdMs = options.idleMinutes * 60_000;
  if (atMs - state.idleSinceMs < thresholdMs) return state;
  detections.push({
    kind: 'excessive_idling',
    key: '',
    occurredAt: new Date(state.idleSinceMs + thresholdMs),
    severity: options.idleMinutes >= mediumIdleMinutes ? 'medium' : 'low',
    description: `Engine idling for ${options.idleMinutes} min without moving.`,
  });
  return { ...state, fired: true };
}

export const excessiveIdlingDetector: Detector<IdlingState> = {
  kind: 'excessive_idling',
  initial: () => ({
    watermarks: {},
    engine: null,
    speedKph: null,
    position: null,
    anchor: null,
    idleSinceMs: null,
    fired: false,
  }),
  detect(prev, input: MonitoringInput, options, now) {
    const fresh = freshSamples(input.samples, signals, prev.watermarks, now);
    const detections: Detection[] = [];
    let state: IdlingState = { ...prev, watermarks: fresh.watermarks };
    for (const sample of fresh.samples) {
      const atMs = sample.recordedAt.getTime();
      // The idle held right up to this sample: the threshold may have passed before it.
      state = settle(state, atMs, options, detections);
      state = track(apply(state, sample.signal, sample.value), atMs);
      state = settle(state, atMs, options, detections);
    }
    state = settle(state, now.getTime(), options, detections);
    return { state, detections };
  },
};
