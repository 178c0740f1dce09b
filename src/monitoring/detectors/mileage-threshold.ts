/**
 * mileage_threshold (docs/health.md "Sources"; Traccar's MaintenanceEventHandler): the trusted
 * odometer (`input.health.odometer`, the health engine's) crosses `options.mileageThresholdMiles`,
 * i.e. the previous trusted reading was below it and this one is at or above it. Fires once and
 * never again for that threshold; a new threshold starts over from the last reading. A vehicle
 * already past the threshold when first seen never fires (it did not cross it while watched).
 * Suppressed while the link is in conflict (distances unverified): the crossing is judged once the
 * conflict clears, from the last reading before it. Info.
 */
import { kmToMiles } from '../../domain/units.js';
import type { Detection, Detector } from '../types.js';

/** Miles converted from km are float quotients; a reading exactly on the threshold must count. */
const epsilonMiles = 1e-9;

export interface MileageThresholdState {
  /** The threshold this state counts for; another one starts over. */
  thresholdMiles: number | null;
  /** The last trusted odometer read, miles. */
  lastMiles: number | null;
  lastAtMs: number | null;
  fired: boolean;
}

const formatMiles = (miles: number) => miles.toLocaleString('en-US', { maximumFractionDigits: 1 });

export const mileageThresholdDetector: Detector<MileageThresholdState> = {
  kind: 'mileage_threshold',
  initial: () => ({ thresholdMiles: null, lastMiles: null, lastAtMs: null, fired: false }),
  detect(prev, input, options) {
    const threshold = options.mileageThresholdMiles;
    let state = prev;
    if (state.thresholdMiles !== threshold) state = { ...state, thresholdMiles: threshold, fired: false };
    const odometer = input.health.odometer;
    if (!odometer || input.health.linkBroken?.reason === 'conflict') return { state, detections: [] };
    const atMs = odometer.at.getTime();
    if (state.lastAtMs !== null && atMs < state.lastAtMs) return { state, detections: [] };

    const miles = kmToMiles(odometer.km);
    const detections: Detection[] = [];
    if (
      threshold !== null &&
      !state.fired &&
      state.lastMiles !== null &&
      state.lastMiles < threshold - epsilonMiles &&
      miles >= threshold - epsilonMiles
    ) {
      state = { ...state, fired: true };
      detections.push({
        kind: 'mileage_threshold',
        key: String(threshold),
        occurredAt: odometer.at,
        severity: 'info',
        description: `Odometer passed ${formatMiles(threshold)} mi (now ${formatMiles(miles)} mi).`,
      });
    }
    return { state: { ...state, lastMiles: miles, lastAtMs: atMs }, detections };
  },
};
