/**
 * hard_impact (docs/health.md "Sources", Geotab collision thresholds): an `impact` event from
 * the provider, or any provider event with a peak of 1.5 g or more. High; critical at 2.5 g or more.
 * One per 30 s window from the first impact: the impacts of a window read in one evaluation raise
 * one detection at the window's strongest peak; later ones in the window are absorbed (as is a
 * rapid_deceleration within it: rapid-deceleration.ts).
 */
import { freshEvents } from '../fresh.js';
import { impactWindowMs, majorImpactG } from '../../domain/incidents.js';
import { isImpact } from '../incidents.js';
import { providerEventKinds } from '../../domain/sample.js';
import type { Detection, Detector } from '../types.js';

export interface HardImpactState {
  eventsThroughMs: number | null;
  /** The first impact of the current window. */
  windowStartMs: number | null;
}

function describe(peakG: number | null): string {
  return peakG === null ? 'Impact reported by the vehicle.' : `Impact of ${Math.abs(peakG).toFixed(1)} g.`;
}

export const hardImpactDetector: Detector<HardImpactState> = {
  kind: 'hard_impact',
  initial: () => ({ eventsThroughMs: null, windowStartMs: null }),
  detect(prev, input, _options, now) {
    const events = freshEvents(input.events, providerEventKinds, prev.eventsThroughMs, now);
    let windowStartMs = prev.windowStartMs;
    const detections: Detection[] = [];
    let open: { detection: Detection; peakG: number | null } | null = null;
    for (const event of events.events) {
      if (!isImpact(event)) continue;
      const atMs = event.recordedAt.getTime();
      const g = event.g === null ? null : Math.abs(event.g);
      if (windowStartMs !== null && atMs >= windowStartMs && atMs - windowStartMs < impactWindowMs) {
        // Absorbed; a window opened in this evaluation takes the strongest peak.
        if (open && g !== null && (open.peakG === null || g > open.peakG)) {
          open.peakG = g;
          open.detection.severity = g >= majorImpactG ? 'critical' : 'high';
          open.detection.description = describe(g);
        }
        continue;
      }
      windowStartMs = atMs;
      const detection: Detection = {
        kind: 'hard_impact',
        key: '',
        occurredAt: event.recordedAt,
        severity: g !== null && g >= majorImpactG ? 'critical' : 'high',
        description: describe(g),
      };
      open = { detection, peakG: g };
      detections.push(detection);
    }
    return { state: { eventsThroughMs: events.throughMs, windowStartMs }, detections };
  },
};
