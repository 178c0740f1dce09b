/**
 * rapid_deceleration (harsh braking; docs/health.md "Sources"): the provider's `hard_brake`
 * event, or a speed drop of 0.38 g or more between speed samples at most 2 s apart while moving
 * (≥ 8 km/h). Low; medium at 0.5 g or more. At most one per 15 s. A brake within 30 s of an
 * impact is part of the collision and is left to hard_impact, whether or not the subscription
 * includes it (one incident, one event).
 */
import { strongBrakingG } from '../../domain/incidents.js';
import { epsilonG, harshBrakingG, harshDrivingDetector } from '../incidents.js';

export const rapidDecelerationDetector = harshDrivingDetector({
  kind: 'rapid_deceleration',
  eventKind: 'hard_brake',
  harsh: (g) => g <= -harshBrakingG + epsilonG,
  severity: (g) => (g !== null && g >= strongBrakingG - epsilonG ? 'medium' : 'low'),
  label: 'Hard braking',
  absorbedByImpacts: true,
});
