/**
 * geo_fence_exit: the vehicle left a watched geofence, one event per crossing (key = the fence id),
 * including a pass through the fence between two sparse fixes (after its entry;
 * fence-transitions.ts). Info.
 */
import { fenceTransitions, initialFenceState, type FenceState } from '../fence-transitions.js';
import type { Detector } from '../types.js';

export const geoFenceExitDetector: Detector<FenceState> = {
  kind: 'geo_fence_exit',
  initial: initialFenceState,
  detect(prev, input, _options, now) {
    const { state, transitions } = fenceTransitions(prev, input, now);
    const detections = transitions
      .filter((transition) => transition.edge === 'exit')
      .map(({ fence, atMs, crossing }) => ({
        kind: 'geo_fence_exit' as const,
        key: fence.id,
        occurredAt: new Date(atMs),
        severity: 'info' as const,
        description: crossing
          ? `Passed through geofence "${fence.name}" between two location fixes (left).`
          : `Left geofence "${fence.name}".`,
      }));
    return { state, detections };
  },
};
