/**
 * Health thresholds and maintenance intervals: documented defaults (docs/health.md "Sources"),
 * overridable per company and per vehicle with partial objects (vehicle over company over default).
 */
import type { AlertSeverity } from './vehicle.js';

export interface MaintenanceInterval {
  /** Miles between services; null for a time-only interval. */
  intervalMiles: number | null;
  /** Months between services; null for a distance-only interval. */
  intervalMonths: number | null;
  /** Due soon within this many miles of the due meter. */
  soonMiles: number;
  /** Due soon within this many days of the due date. */
  soonDays: number;
  soonSeverity: AlertSeverity;
  overdueSeverity: AlertSeverity;
  /** Overdue by more than this escalates to `escalatedSeverity`. */
  escalateAfterMiles: number;
  escalateAfterDays: number;
  escalatedSeverity: AlertSeverity;
  enabled: boolean;
}

export interface HealthConfig {
  battery: {
    /** 12 or 24; a 24 V system doubles every voltage threshold. */
    nominalVolts: number;
    /** Engine off, below this for `restingConfirmSeconds`: medium. */
    restingLowVolts: number;
    /** Engine off, below this for `restingConfirmSeconds`: high. */
    restingCriticalVolts: number;
    restingConfirmSeconds: number;
    /** Engine running, below this for `chargingConfirmSeconds`: medium (charging fault). */
    chargingLowVolts: number;
    chargingConfirmSeconds: number;
    /** Samples this soon after the engine starts are ignored (cranking dip). */
    crankingIgnoreSeconds: number;
    /** Cleared once at least threshold + margin for `rearmSeconds`. */
    rearmMarginVolts: number;
    rearmSeconds: number;
  };
  coolant: {
    highC: number;
    criticalC: number;
    confirmSeconds: number;
    rearmMarginC: number;
    rearmSeconds: number;
  };
  tires: {
    /** Placard (recommended cold) pressure. */
    placardKpa: number;
    /** At or below this share of placard: low (early warning). */
    warnRatio: number;
    /** At or below this share of placard: high (FMVSS 138 telltale at 25 % under). */
    criticalRatio: number;
    /** Cleared at or above this share of placard. */
    clearRatio: number;
  };
  fuel: {
    lowPercent: number;
    criticalPercent: number;
    confirmSeconds: number;
    rearmPercent: number;
  };
  dtc: {
    /** A code counts as cleared after this many DTC reports without it. */
    clearAfterReports: number;
  };
  brakes: {
    lowPercent: number;
    criticalPercent: number;
    rearmPercent: number;
  };
  link: {
    staleDays: number;
    /** A tracker reading this far below the trusted odometer is a backwards candidate. */
    backwardsToleranceKm: number;
    /** Backwards by more than this is a conflict at once, without waiting for confirmation. */
    immediateConflictKm: number;
    /** Faster than this between readings is impossible (Fleetio: 3,000 mi/day). */
    maxDailyKm: number;
    /** Consecutive conflicting readings that make a conflict; consecutive consistent ones that clear it. */
    confirmReadings: number;
  };
  maintenance: Record<string, MaintenanceInterval>;
}

const interval = (
  intervalMiles: number | null,
  intervalMonths: number | null,
  soonMiles: number,
  soonDays: number,
  severities: [AlertSeverity, AlertSeverity, AlertSeverity],
): MaintenanceInterval => ({
  intervalMiles,
  intervalMonths,
  soonMiles,
  soonDays,
  soonSeverity: severities[0],
  overdueSeverity: severities[1],
  escalatedSeverity: severities[2],
  escalateAfterMiles: 1000,
  escalateAfterDays: 30,
  enabled: true,
});

/** The defaults; their sources are in docs/health.md "Sources". */
export const defaultHealthConfig: HealthConfig = {
  battery: {
    nominalVolts: 12,
    restingLowVolts: 12.2,
    restingCriticalVolts: 11.8,
    restingConfirmSeconds: 120,
    chargingLowVolts: 13.2,
    chargingConfirmSeconds: 300,
    crankingIgnoreSeconds: 60,
    rearmMarginVolts: 0.2,
    rearmSeconds: 120,
  },
  coolant: { highC: 105, criticalC: 112, confirmSeconds: 60, rearmMarginC: 5, rearmSeconds: 60 },
  tires: { placardKpa: 240, warnRatio: 0.9, criticalRatio: 0.75, clearRatio: 0.92 },
  fuel: { lowPercent: 15, criticalPercent: 7, confirmSeconds: 120, rearmPercent: 20 },
  dtc: { clearAfterReports: 2 },
  brakes: { lowPercent: 25, criticalPercent: 10, rearmPercent: 50 },
  link: { staleDays: 7, backwardsToleranceKm: 1, immediateConflictKm: 50, maxDailyKm: 4828, confirmReadings: 2 },
  maintenance: {
    oil_change: interval(5000, 6, 500, 14, ['low', 'medium', 'high']),
    tire_rotation: interval(7500, 6, 500, 14, ['low', 'medium', 'medium']),
    brake_inspection: interval(15000, 12, 1000, 30, ['medium', 'high', 'high']),
    cooling_system_inspection: interval(15000, 12, 1000, 30, ['low', 'medium', 'medium']),
    transmission_inspection: interval(15000, 12, 1000, 30, ['low', 'medium', 'medium']),
    steering_inspection: interval(15000, 12, 1000, 30, ['low', 'medium', 'medium']),
    engine_air_filter: interval(30000, null, 1000, 30, ['low', 'low', 'medium']),
    // Ford: first at 105,000 mi / 6 years, then every 45,000 mi / 3 years; we use the repeat interval.
    coolant_change: interval(45000, 36, 2000, 60, ['low', 'low', 'medium']),
  },
};

export type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? DeepPartial<T[K]> : T[K] };

function merge<T>(base: T, override: DeepPartial<T> | undefined): T {
  if (!override) return base;
  const result = { ...base } as Record<string, unknown>;
  for (const [key, value] of Object.entries(override)) {
    if (value === undefined) continue;
    const current = result[key];
    result[key] =
      current && typeof current === 'object' && value && typeof value === 'object' && !Array.isArray(value)
        ? merge(current, value as DeepPartial<typeof current>)
        : value;
  }
  return result as T;
}

/** The effective configuration: defaults, then the company's overrides, then the vehicle's. */
export function effectiveHealthConfig(
  company?: DeepPartial<HealthConfig>,
  vehicle?: DeepPartial<HealthConfig>,
): HealthConfig {
  return merge(merge(defaultHealthConfig, company), vehicle);
}
