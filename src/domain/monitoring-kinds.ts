/**
 * The monitoring event catalogue (docs/monitoring.md "Event kinds"): 20 kinds in five groups, which tier
 * covers which kinds, the two aliases the spec's examples use, and the subscription options with
 * their defaults (docs/monitoring.md). Pure data; the detectors (src/monitoring/detectors/) and the API
 * both read it from here.
 */

export const monitoringGroups = {
  maintenance: [
    'oil_change_needed',
    'brake_wear_detected',
    'tire_pressure_low',
    'battery_voltage_low',
    'coolant_temperature_high',
  ],
  system: ['check_engine_light', 'abs_warning', 'airbag_warning', 'transmission_fault'],
  incident: ['hard_impact', 'rapid_deceleration', 'aggressive_acceleration', 'airbag_deployment'],
  location: ['geo_fence_exit', 'geo_fence_entry', 'speed_limit_exceeded', 'excessive_idling'],
  usage: ['mileage_threshold', 'fuel_level_low', 'maintenance_due'],
} as const;

export type MonitoringGroup = keyof typeof monitoringGroups;
export type MonitoringKind = (typeof monitoringGroups)[MonitoringGroup][number];

export const monitoringKinds: readonly MonitoringKind[] = Object.values(monitoringGroups).flat();

export function groupOf(kind: MonitoringKind): MonitoringGroup {
  for (const [group, kinds] of Object.entries(monitoringGroups) as Array<[MonitoringGroup, readonly string[]]>) {
    if (kinds.includes(kind)) return group;
  }
  throw new Error(`unknown monitoring kind ${kind}`);
}

export const monitoringTiers = ['basic', 'standard', 'premium'] as const;
export type MonitoringTier = (typeof monitoringTiers)[number];

/**
 * What each tier covers (docs/monitoring.md): basic = the Maintenance alerts group plus `maintenance_due`;
 * standard = basic plus the System warnings group; premium = all 20 kinds.
 */
export const tierKinds: Readonly<Record<MonitoringTier, readonly MonitoringKind[]>> = {
  basic: [...monitoringGroups.maintenance, 'maintenance_due'],
  standard: [...monitoringGroups.maintenance, 'maintenance_due', ...monitoringGroups.system],
  premium: monitoringKinds,
};

/** How long each tier keeps its events and deliveries, days (docs/monitoring.md "Retention and metering"). */
export const tierRetentionDays: Readonly<Record<MonitoringTier, number>> = { basic: 30, standard: 90, premium: 365 };

/** Kinds the spec's subscription examples use that the group list does not contain. */
export const kindAliases: Readonly<Record<string, MonitoringKind>> = {
  maintenance_needed: 'maintenance_due',
  low_battery: 'battery_voltage_low',
};

/** The canonical kind of a requested name (an alias resolved), or null for an unknown name. */
export function canonicalKind(name: string): MonitoringKind | null {
  if ((monitoringKinds as readonly string[]).includes(name)) return name as MonitoringKind;
  return kindAliases[name] ?? null;
}

/** Per-subscription options (all optional in the request; docs/monitoring.md). */
export interface MonitoringOptions {
  /** `speed_limit_exceeded` fires above this speed, km/h. Default 120. */
  speedLimitKph: number;
  /** `excessive_idling` fires after the engine idles this long without moving, minutes. Default 10. */
  idleMinutes: number;
  /** `mileage_threshold` fires once when the odometer crosses this, miles; null = never. */
  mileageThresholdMiles: number | null;
  /** `fuel_level_low` fires at or below this fuel level, percent. Default 15. */
  fuelLevelPercent: number;
  /** Geofences watched for entry and exit; null = every geofence of the company. */
  geofenceIds: string[] | null;
}

export const defaultMonitoringOptions: MonitoringOptions = {
  speedLimitKph: 120,
  idleMinutes: 10,
  mileageThresholdMiles: null,
  fuelLevelPercent: 15,
  geofenceIds: null,
};

/** The options as stored and answered (snake_case, docs/monitoring.md), defaults filled in. */
export interface StoredMonitoringOptions {
  speed_limit_kph?: number;
  idle_minutes?: number;
  mileage_threshold_miles?: number | null;
  fuel_level_percent?: number;
  geofence_ids?: string[] | null;
}

export function monitoringOptions(stored: StoredMonitoringOptions): MonitoringOptions {
  return {
    speedLimitKph: stored.speed_limit_kph ?? defaultMonitoringOptions.speedLimitKph,
    idleMinutes: stored.idle_minutes ?? defaultMonitoringOptions.idleMinutes,
    mileageThresholdMiles: stored.mileage_threshold_miles ?? defaultMonitoringOptions.mileageThresholdMiles,
    fuelLevelPercent: stored.fuel_level_percent ?? defaultMonitoringOptions.fuelLevelPercent,
    geofenceIds: stored.geofence_ids ?? defaultMonitoringOptions.geofenceIds,
  };
}

/** The options as stored and answered: snake_case, every default filled in. */
export function completeMonitoringOptions(stored: StoredMonitoringOptions): Required<StoredMonitoringOptions> {
  const options = monitoringOptions(stored);
  return {
    speed_limit_kph: options.speedLimitKph,
    idle_minutes: options.idleMinutes,
    mileage_threshold_miles: options.mileageThresholdMiles,
    fuel_level_percent: options.fuelLevelPercent,
    geofence_ids: options.geofenceIds,
  };
}
