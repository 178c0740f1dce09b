/**
 * What the incident detectors share (docs/health.md "Sources", incident rows): which provider
 * events count as an impact, accelerations derived from consecutive speed samples (Traccar's
 * BehaviorEventHandler), and the harsh-driving detector that braking and acceleration are built
 * from. Thresholds are the light-duty defaults of docs/health.md "Sources" (those the
 * history report shares are in src/domain/incidents.ts).
 */
import { impactG, impactWindowMs } from '../domain/incidents.js';
import type { AlertSeverity } from '../domain/vehicle.js';
import type { RuleSample } from '../domain/sample.js';
import { finiteValue } from '../health/sample-values.js';
import { providerEventKinds, type ProviderEventKind } from '../domain/sample.js';
import { freshEvents, freshSamples, type Watermarks } from './fresh.js';
import type { MonitoringKind } from '../domain/monitoring-kinds.js';
import type { Detection, Detector } from './types.js';
import type { EventSample } from '../domain/sample.js';

/** Standard gravity as those sources count it, m/s². */
const gMps2 = 9.81;
/** Comparisons of derived g values tolerate float error, so a change exactly on a threshold counts. */
export const epsilonG = 1e-9;

/** Harsh braking at −0.38 g or harder (GPS Insight, light duty). */
export const harshBrakingG = 0.38;
/** Aggressive acceleration at +0.37 g or more (GPS Insight, light duty). */
export const harshAccelerationG = 0.37;
/** GPS speed pairs further apart than this say nothing about a harsh event [U]. */
export const maxSpeedPairGapMs = 2000;
/** Harsh events count only on a trip: the faster speed of the pair at least 8 km/h (5 mph, Samsara). */
export const minMovingKph = 8;
/** The next harsh event of the same kind only after 15 s (Roadeazy). */
export const harshCooldownMs = 15_000;

/** An impact event, or any provider event with a peak of at least `impactG` (either sign). */
export function isImpact(event: EventSample): boolean {
  return event.kind === 'impact' || (event.g !== null && Math.abs(event.g) >= impactG);
}

export interface SpeedPoint {
  atMs: number;
  kph: number;
}

export interface SpeedChange {
  atMs: number;
  /** Longitudinal acceleration in g: negative when slowing down. */
  g: number;
  fromKph: number;
  toKph: number;
  seconds: number;
}

/** Accelerations between consecutive speed samples (fresh `speed_kph` samples, oldest first). */
export function speedChanges(
  last: SpeedPoint | null,
  samples: readonly RuleSample[],
): { changes: SpeedChange[]; last: SpeedPoint | null } {
  const changes: SpeedChange[] = [];
  let previous = last;
  for (const sample of samples) {
    const kph = finiteValue(sample.value);
    if (kph === null || kph < 0) continue;
    const atMs = sample.recordedAt.getTime();
    if (previous) {
      const gapMs = atMs - previous.atMs;
      if (gapMs > 0 && gapMs <= maxSpeedPairGapMs && Math.max(previous.kph, kph) >= minMovingKph) {
        const seconds = gapMs / 1000;
        const g = (kph - previous.kph) / 3.6 / seconds / gMps2;
        changes.push({ atMs, g, fromKph: previous.kph, toKph: kph, seconds });
      }
    }
    previous = { atMs, kph };
  }
  return { changes, last: previous };
}

export interface HarshState {
  /** `speed_kph` watermark. */
  watermarks: Watermarks;
  eventsThroughMs: number | null;
  speed: SpeedPoint | null;
  lastFiredMs: number | null;
  /** Braking only: the newest impact read, which absorbs brakes within `impactWindowMs`. */
  lastImpactMs: number | null;
}

interface HarshCandidate {
  atMs: number;
  /** Magnitude in g, or null when a provider event gives none. */
  g: number | null;
  description: string;
}

export interface HarshParts {
  kind: MonitoringKind;
  /** The provider's own harsh event of this kind. */
  eventKind: Extract<ProviderEventKind, 'hard_brake' | 'hard_accel'>;
  /** Whether a speed change (signed g) is harsh. */
  harsh: (g: number) => boolean;
  severity: (g: number | null) => AlertSeverity;
  /** "Hard braking" / "Aggressive acceleration". */
  label: string;
  /** Braking: a collision's deceleration is the collision (hard_impact absorbs it). */
  absorbedByImpacts: boolean;
}

const formatG = (g: number) => `${Math.abs(g).toFixed(2)} g`;

/**
 * A harsh-driving detector: the provider's harsh events of `eventKind` and speed changes past the
 * threshold, in time order, at most one per `harshCooldownMs`. An event that is itself an impact
 * (≥ 1.5 g) is left to hard_impact.
 */
export function harshDrivingDetector(parts: HarshParts): Detector<HarshState> {
  return {
    kind: parts.kind,
    initial: () => ({ watermarks: {}, eventsThroughMs: null, speed: null, lastFiredMs: null, lastImpactMs: null }),
    detect(prev, input, _options, now) {
      const speeds = freshSamples(input.samples, ['speed_kph'], prev.watermarks, now);
      const events = freshEvents(input.events, providerEventKinds, prev.eventsThroughMs, now);
      const { changes, last } = speedChanges(prev.speed, speeds.samples);

      const impacts = events.events.filter(isImpact).map((event) => event.recordedAt.getTime());
      if (prev.lastImpactMs !== null) impacts.push(prev.lastImpactMs);
      const candidates: HarshCandidate[] = [];
      for (const event of events.events) {
        if (event.kind !== parts.eventKind || isImpact(event)) continue;
        const g = event.g === null ? null : Math.abs(event.g);
        candidates.push({
          atMs: event.recordedAt.getTime(),
          g,
          description: `${parts.label} reported by the vehicle${g === null ? '' : ` (${formatG(g)})`}.`,
        });
      }
      for (const change of changes) {
        if (!parts.harsh(change.g)) continue;
        candidates.push({
          atMs: change.atMs,
          g: Math.abs(change.g),
          description:
            `${parts.label}: ${formatG(change.g)}, ${Math.round(change.fromKph)} → ${Math.round(change.toKph)} km/h ` +
            `in ${change.seconds} s.`,
        });
      }
      candidates.sort((a, b) => a.atMs - b.atMs);

      let lastFiredMs = prev.lastFiredMs;
      const detections: Detection[] = [];
      for (const candidate of candidates) {
        if (
          parts.absorbedByImpacts &&
          impacts.some((impactMs) => Math.abs(candidate.atMs - impactMs) <= impactWindowMs)
        )
          continue;
        if (lastFiredMs !== null && Math.abs(candidate.atMs - lastFiredMs) < harshCooldownMs) continue;
        // A speed change may be older than the last event that fired (their watermarks differ).
        lastFiredMs = lastFiredMs === null ? candidate.atMs : Math.max(lastFiredMs, candidate.atMs);
        detections.push({
          kind: parts.kind,
          key: '',
          occurredAt: new Date(candidate.atMs),
          severity: parts.severity(candidate.g),
          description: candidate.description,
        });
      }
      const lastImpactMs = parts.absorbedByImpacts && impacts.length > 0 ? Math.max(...impacts) : null;
      return {
        state: {
          watermarks: speeds.watermarks,
          eventsThroughMs: events.throughMs,
          speed: last,
          lastFiredMs,
          lastImpactMs,
        },
        detections,
      };
    },
  };
}
