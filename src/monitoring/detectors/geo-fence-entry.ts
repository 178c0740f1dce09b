/**
 * geo_fence_entry: the vehicle entered a watched geofence, one event per crossing (key = the fence
 * id), including a pass through the fence between two sparse fixes (fence-transitions.ts). Info.
 */
import { fenceTransitions, initialFenceState, type FenceState } from '../fence-transitions.js';
import type { Detector } from '../types.js';

export const geoFenceEntryDetector: Detector<FenceState> = {
  kind: 'geo_fence_entry',
  initial: initialFenceState,
  detect(prev, input, _options, now) {
    const { state, transitions } = fenceTransitions(prev, input, now);
    const detections = transitions
      .filter((transition) => transition.edge === 'entry')
      .map(({ fence, atMs, crossing }) => ({
        kind: 'geo_fence_entry' as const,
        key: fence.id,
        occurredAt: new Date(atMs),
        severity: 'info' as const,
        description: crossing
          ? `Passed through geofence "${fence.name}" between two location fixes (entered).`
          : `Entered geofence "${fence.name}".`,
      }));
    return { state, detections };
  },
};
