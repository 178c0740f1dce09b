/**
 * Incident thresholds shared by the monitoring detectors (src/monitoring/incidents.ts, the
 * hard_impact, rapid_deceleration and airbag_deployment detectors) and the history report's
 * incidents, so both count a collision alike. Light-duty defaults; sources in docs/health.md
 * "Sources".
 */

/** A peak of 1.5 g or more is a collision (Geotab minor, 1.5–2.5 g: high). */
export const impactG = 1.5;
/** 2.5 g or more is a major collision (Geotab major: critical). */
export const majorImpactG = 2.5;
/** One hard_impact per 30 s window; brakes within it belong to the collision [U]. */
export const impactWindowMs = 30_000;
/** Braking at 0.5 g or harder is medium rather than low [U]. */
export const strongBrakingG = 0.5;
/** One airbag incident lasts 10 minutes from its first deployment event [U]. */
export const airbagIncidentMs = 10 * 60_000;
