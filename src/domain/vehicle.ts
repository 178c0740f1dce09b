/**
 * Vehicle vocabulary.
 * - signals: the provider-normalized latest values (odometer, fuel_percent, battery_voltage, …),
 *   each kept with its own time.
 * - health: roll-up status plus active alerts.
 * - link_broken: derived tracker-link state; null for a healthy link or a manually tracked vehicle.
 */
export type HealthStatus = 'ok' | 'needs_attention' | 'critical' | 'unknown';
export type AlertSeverity = 'info' | 'low' | 'medium' | 'high' | 'critical';

export interface VehicleAlert {
  severity: AlertSeverity;
  type: string;
  display_name: string;
  due_date: string | null;
  due_miles_remaining: number | null;
}

export interface VehicleHealth {
  status: HealthStatus;
  alerts: VehicleAlert[];
}

export type LinkBrokenReason = 'no_reading' | 'stale' | 'conflict';

export interface LinkBroken {
  reason: LinkBrokenReason;
  since: string | null;
  tracker_km: number | null;
}

/** The odometer signal as stored in the read model; km is canonical. */
export interface OdometerSignal {
  km: number;
  as_of: string;
  source: string;
}

/** A tracker odometer older than this is stale (`link_broken` `stale`, docs/health.md). */
export const staleOdometerAfterMs = 7 * 24 * 60 * 60 * 1000;

export interface VehicleRecord {
  id: string;
  companyId: string;
  name: string | null;
  vin: string | null;
  licensePlate: string | null;
  make: string | null;
  model: string | null;
  year: number | null;
  telematicsProvider: string | null;
  providerVehicleId: string | null;
  providerConnectionId: string | null;
  homeLocationId: string | null;
  active: boolean;
  signals: Record<string, unknown>;
  health: VehicleHealth;
  linkBroken: LinkBroken | null;
  asOf: Date | null;
  ecuOdometerAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}
