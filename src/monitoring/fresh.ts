/**
 * The late-sample guard every detector applies (Traccar's BasePositionEventHandler, docs/health.md
 * "Sources"): a detector remembers the newest time it read of each signal and of provider
 * events, and drops anything older, so a late (out-of-order) reading never creates a detection.
 * Equal times pass: two readings of one moment are not late. Readings dated more than the
 * future-skew allowance after `now` are dropped too, so a wrong device clock cannot move a
 * watermark a day ahead and silence the signal.
 */
import { maxFutureSkewMs } from '../domain/sample.js';
import type { RuleSample } from '../domain/sample.js';
import type { EventSample } from '../domain/sample.js';
import type { ProviderEventKind } from '../domain/sample.js';

/** Per signal, the newest `recordedAt` read (epoch ms). JSON; one entry per signal a detector reads. */
export type Watermarks = Record<string, number>;

/** The samples of `signals` that are not late, in feed order, and the watermarks after them. */
export function freshSamples(
  samples: readonly RuleSample[],
  signals: readonly string[],
  watermarks: Readonly<Watermarks>,
  now: Date,
): { samples: RuleSample[]; watermarks: Watermarks } {
  const through: Watermarks = { ...watermarks };
  const fresh: RuleSample[] = [];
  const latestMs = now.getTime() + maxFutureSkewMs;
  for (const sample of samples) {
    if (!signals.includes(sample.signal)) continue;
    const atMs = sample.recordedAt.getTime();
    if (!Number.isFinite(atMs) || atMs > latestMs) continue;
    const seen = through[sample.signal];
    if (seen !== undefined && atMs < seen) continue;
    through[sample.signal] = atMs;
    fresh.push(sample);
  }
  return { samples: fresh, watermarks: through };
}

/** The provider events of `kinds` that are not late, oldest first, and the watermark after them. */
export function freshEvents(
  events: readonly EventSample[],
  kinds: readonly ProviderEventKind[],
  throughMs: number | null,
  now: Date,
): { events: EventSample[]; throughMs: number | null } {
  const latestMs = now.getTime() + maxFutureSkewMs;
  const fresh = events
    .filter((event) => {
      const atMs = event.recordedAt.getTime();
      return (
        kinds.includes(event.kind) &&
        Number.isFinite(atMs) &&
        atMs <= latestMs &&
        (throughMs === null || atMs >= throughMs)
      );
    })
    .sort((a, b) => a.recordedAt.getTime() - b.recordedAt.getTime());
  const newest = fresh[fresh.length - 1];
  return { events: fresh, throughMs: newest ? newest.recordedAt.getTime() : throughMs };
}

/** When the newest of these signals' samples in the input was taken (not after `now`), else `now`. */
export function newestSampleAt(samples: readonly RuleSample[], signals: readonly string[], now: Date): Date {
  let newest: Date | null = null;
  for (const sample of samples) {
    if (!signals.includes(sample.signal)) continue;
    const atMs = sample.recordedAt.getTime();
    if (atMs <= now.getTime() && (!newest || atMs > newest.getTime())) newest = sample.recordedAt;
  }
  return newest ?? now;
}
