/** The health.sweep job's period (src/queue/catalog.ts), which the sweep's hourly shares of full evaluations turn with (src/health/recheck.ts). */
export const healthSweepIntervalMs = 15 * 60 * 1000;
