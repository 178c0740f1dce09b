/**
 * airbag_deployment (docs/health.md "Sources"): the provider's `airbag_deployment` event (an
 * OEM/SRS deployment flag or crash notification). Critical. Once per incident: further deployment
 * events within 10 minutes of the first belong to it. The published fallback (an impact of 2.5 g
 * followed by standstill) is not used: it is a guess, and hard_impact already reports that impact.
 */
import { airbagIncidentMs } from '../../domain/incidents.js';
import { freshEvents } from '../fresh.js';
import type { Detection, Detector } from '../types.js';

export interface AirbagDeploymentState {
  eventsThroughMs: number | null;
  incidentStartMs: number | null;
}

export const airbagDeploymentDetector: Detector<AirbagDeploymentState> = {
  kind: 'airbag_deployment',
  initial: () => ({ eventsThroughMs: null, incidentStartMs: null }),
  detect(prev, input, _options, now) {
    const events = freshEvents(input.events, ['airbag_deployment'], prev.eventsThroughMs, now);
    let incidentStartMs = prev.incidentStartMs;
    const detections: Detection[] = [];
    for (const event of events.events) {
      const atMs = event.recordedAt.getTime();
      if (incidentStartMs !== null && atMs >= incidentStartMs && atMs - incidentStartMs < airbagIncidentMs) continue;
      incidentStartMs = atMs;
      detections.push({
        kind: 'airbag_deployment',
        key: '',
        occurredAt: event.recordedAt,
        severity: 'critical',
        description: 'Airbag deployment reported by the vehicle.',
      });
    }
    return { state: { eventsThroughMs: events.throughMs, incidentStartMs }, detections };
  },
};
