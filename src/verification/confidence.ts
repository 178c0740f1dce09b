/**
 * How far an instant verification's odometer can be trusted (docs/verification.md):
 * a pure function of where the value came from, the tracker link's state and the value's age.
 * A broken link is never high; the first row that matches decides:
 *
 * | # | condition                                                        | confidence |
 * |---|------------------------------------------------------------------|------------|
 * | 1 | no odometer known                                                | none       |
 * | 2 | the link is in conflict (tracker and trusted odometer disagree)  | low        |
 * | 3 | older than 365 days                                              | low        |
 * | 4 | entered by a person (manual, service) within 30 days             | medium     |
 * | 5 | entered by a person, older                                       | low        |
 * | 6 | telematics, link stale or silent, or older than 7 days           | low        |
 * | 7 | telematics ECU odometer within 24 hours, link healthy            | high       |
 * | 8 | any other telematics value (GPS-derived, or 1 to 7 days old)     | medium     |
 *
 * The 7 days are the stale-odometer limit of `link_broken` (a tracker silent that long is broken);
 * self-reported and year-old values are low (docs/verification.md).
 */
import type { LinkBrokenReason } from '../domain/vehicle.js';
import { isTelematicsSource } from '../domain/sample.js';
import { msPerDay } from '../domain/units.js';

export const confidences = ['high', 'medium', 'low', 'none'] as const;
export type Confidence = (typeof confidences)[number];

export interface OdometerEvidence {
  /** null when the vehicle has no odometer. */
  source: string | null;
  /** The value is the provider's ECU odometer (not GPS-derived). */
  ecu: boolean;
  linkBroken: LinkBrokenReason | null;
  ageMs: number;
}

export function odometerConfidence(e: OdometerEvidence): Confidence {
  if (e.source === null) return 'none';
  if (e.linkBroken === 'conflict') return 'low';
  if (e.ageMs > 365 * msPerDay) return 'low';
  if (!isTelematicsSource(e.source)) return e.ageMs <= 30 * msPerDay ? 'medium' : 'low';
  if (e.linkBroken !== null || e.ageMs > 7 * msPerDay) return 'low';
  if (e.ecu && e.ageMs <= msPerDay) return 'high';
  return 'medium';
}
