/**
 * speed_limit_exceeded (docs/health.md "Sources"; Traccar's OverspeedProcessor): `speed_kph`
 * above `options.speedLimitKph` continuously for at least `minOverspeedMs`, once per episode. The
 * episode starts at the first sample over the limit and fires at a later sample still over it once
 * the duration is reached (Traccar fires on a position, not on a timer: a vehicle that stops
 * reporting while over the limit is not assumed to keep speeding). It re-arms at a sample at or
 * below the limit. Samples more than `maxSampleGapMs` apart break the episode: nothing shows the
 * speed held in between.
 *
 * Severity by the fastest speed of the episode so far: low up to 10 mph over, medium up to 20 mph
 * over, high beyond [U].
 */
import type { AlertSeverity } from '../../domain/vehicle.js';
import { kmToMiles } from '../../domain/units.js';
import { finiteValue } from '../../health/sample-values.js';
import { freshSamples, type Watermarks } from '../fresh.js';
import type { Detection, Detector } from '../types.js';

/** Over the limit this long before it counts: overtaking takes less [U] (Traccar's default is 0). */
export const minOverspeedMs = 30_000;
/** A gap between speed samples longer than this restarts the episode [U]. */
export const maxSampleGapMs = 5 * 60_000;

export interface SpeedLimitState {
  /** `speed_kph` watermark. */
  watermarks: Watermarks;
  /** The last speed sample's time: the gap check. */
  lastAtMs: number | null;
  /** Over the limit since; null when at or below it. */
  overSinceMs: number | null;
  /** The fastest speed of the current episode. */
  maxKph: number | null;
  /** The current episode has fired. */
  fired: boolean;
}

function severityOf(excessKph: number): AlertSeverity {
  const excessMiles = kmToMiles(excessKph);
  if (excessMiles <= 10) return 'low';
  return excessMiles <= 20 ? 'medium' : 'high';
}

export const speedLimitExceededDetector: Detector<SpeedLimitState> = {
  kind: 'speed_limit_exceeded',
  initial: () => ({ watermarks: {}, lastAtMs: null, overSinceMs: null, maxKph: null, fired: false }),
  detect(prev, input, options, now) {
    const fresh = freshSamples(input.samples, ['speed_kph'], prev.watermarks, now);
    const limit = options.speedLimitKph;
    let state: SpeedLimitState = { ...prev, watermarks: fresh.watermarks };
    const detections: Detection[] = [];
    for (const sample of fresh.samples) {
      const kph = finiteValue(sample.value);
      if (kph === null || kph < 0) continue;
      const atMs = sample.recordedAt.getTime();
      const continuous = state.lastAtMs !== null && atMs - state.lastAtMs <= maxSampleGapMs;
      state = { ...state, lastAtMs: atMs };
      if (kph <= limit) {
        state = { ...state, overSinceMs: null, maxKph: null, fired: false };
        continue;
      }
      const starts = state.overSinceMs === null || !continuous;
      const overSinceMs = starts || state.overSinceMs === null ? atMs : state.overSinceMs;
      const maxKph = starts ? kph : Math.max(state.maxKph ?? kph, kph);
      state = { ...state, overSinceMs, maxKph, fired: starts ? false : state.fired };
      if (state.fired || atMs - overSinceMs < minOverspeedMs) continue;
      state = { ...state, fired: true };
      detections.push({
        kind: 'speed_limit_exceeded',
        key: '',
        occurredAt: sample.recordedAt,
        severity: severityOf(maxKph - limit),
        description:
          `Speed above ${limit} km/h for ${Math.round((atMs - overSinceMs) / 1000)} s, ` +
          `up to ${Math.round(maxKph)} km/h.`,
      });
    }
    return { state, detections };
  },
};
