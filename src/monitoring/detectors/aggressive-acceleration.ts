/**
 * aggressive_acceleration (docs/health.md "Sources"): the provider's `hard_accel` event, or a
 * speed gain of 0.37 g or more between speed samples at most 2 s apart while moving (≥ 8 km/h).
 * Low. At most one per 15 s. A `hard_accel` of 1.5 g or more is an impact (a vehicle struck from
 * behind) and is left to hard_impact.
 */
import { epsilonG, harshAccelerationG, harshDrivingDetector } from '../incidents.js';

export const aggressiveAccelerationDetector = harshDrivingDetector({
  kind: 'aggressive_acceleration',
  eventKind: 'hard_accel',
  harsh: (g) => g >= harshAccelerationG - epsilonG,
  severity: () => 'low',
  label: 'Aggressive acceleration',
  absorbedByImpacts: false,
});
