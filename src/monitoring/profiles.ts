/**
 * What each kind's webhook body says beyond the detection (docs/monitoring.md
 * "Details and actions"): `details.type` (the kind's group), `details.estimated_cost` and `actions` by severity.
 * The table is documented in docs/monitoring.md ("Event kinds").
 *
 * Costs are indicative US ranges for parts and labour, in USD, for a light-duty vehicle: a fleet
 * manager's first estimate, not a quote [U]. Kinds that are not a repair (incidents, location,
 * usage other than maintenance_due) have none.
 */
import type { AlertSeverity } from '../domain/vehicle.js';
import { groupOf, monitoringKinds, type MonitoringGroup, type MonitoringKind } from '../domain/monitoring-kinds.js';
import type { Detection, MonitoringEventBody } from './types.js';

export type MonitoringActions = MonitoringEventBody['actions'];

export interface KindProfile {
  /** details.type: the kind's group. */
  type: MonitoringGroup;
  /** details.estimated_cost; maintenance_due uses `maintenanceItemCosts` by item. */
  estimatedCost: string | null;
  /** The actions of a detection; a severity not listed takes `default`. */
  actions: Partial<Record<AlertSeverity, MonitoringActions>> & { default: MonitoringActions };
}

const act = (recommended: string, urgent: boolean, canDrive: boolean): MonitoringActions => ({
  recommended,
  urgent,
  can_drive: canDrive,
});

const reviewWithDriver = act('Review the event with the driver.', false, true);
const noAction = act('No action needed unless the movement was unplanned.', false, true);

type ProfileEntry = Omit<KindProfile, 'type'>;

const entries: Record<MonitoringKind, ProfileEntry> = {
  oil_change_needed: {
    estimatedCost: '$50–$120',
    actions: {
      default: act('Schedule an oil change.', false, true),
      high: act('Change the oil now: the interval is well overdue.', true, true),
    },
  },
  brake_wear_detected: {
    estimatedCost: '$150–$400 per axle',
    actions: {
      default: act('Schedule a brake pad replacement.', false, true),
      high: act('Replace the brake pads before further use.', true, false),
    },
  },
  tire_pressure_low: {
    estimatedCost: '$0–$50',
    actions: {
      default: act('Check and inflate the tire at the next stop.', false, true),
      high: act('Stop and inflate or repair the tire: it is 25% or more below placard pressure.', true, false),
    },
  },
  battery_voltage_low: {
    estimatedCost: '$100–$300',
    actions: {
      default: act('Test the battery and the charging system.', false, true),
      high: act('Charge or replace the battery before the next trip.', true, true),
    },
  },
  coolant_temperature_high: {
    estimatedCost: '$100–$1,500',
    actions: {
      default: act('Stop when safe, let the engine cool and check the coolant level.', true, false),
      critical: act('Stop the engine now to prevent damage and have the vehicle towed.', true, false),
    },
  },
  check_engine_light: {
    estimatedCost: '$100–$1,000',
    actions: {
      default: act('Have the diagnostic code read and the fault repaired.', false, true),
      high: act('Have the vehicle inspected before further use.', true, false),
      critical: act('Stop the vehicle when safe and have it inspected.', true, false),
    },
  },
  abs_warning: {
    estimatedCost: '$150–$1,200',
    actions: { default: act('Have the ABS inspected: normal braking works, anti-lock may not.', true, true) },
  },
  airbag_warning: {
    estimatedCost: '$100–$1,000',
    actions: { default: act('Have the airbag system inspected: the airbags may not deploy.', true, true) },
  },
  transmission_fault: {
    estimatedCost: '$150–$3,500',
    actions: {
      default: act('Have the transmission code read and the transmission inspected.', false, true),
      high: act('Stop using the vehicle and have the transmission inspected.', true, false),
      critical: act('Stop using the vehicle and have the transmission inspected.', true, false),
    },
  },
  hard_impact: {
    estimatedCost: null,
    actions: {
      default: act('Contact the driver and inspect the vehicle for damage.', true, true),
      critical: act('Contact the driver now: a major collision was detected.', true, false),
    },
  },
  rapid_deceleration: { estimatedCost: null, actions: { default: reviewWithDriver } },
  aggressive_acceleration: { estimatedCost: null, actions: { default: reviewWithDriver } },
  airbag_deployment: {
    estimatedCost: null,
    actions: { default: act('Contact the driver and emergency services; do not drive the vehicle.', true, false) },
  },
  geo_fence_exit: { estimatedCost: null, actions: { default: noAction } },
  geo_fence_entry: { estimatedCost: null, actions: { default: noAction } },
  speed_limit_exceeded: {
    estimatedCost: null,
    actions: {
      default: act('Review the trip with the driver.', false, true),
      high: act('Contact the driver about the speeding.', true, true),
    },
  },
  excessive_idling: {
    estimatedCost: null,
    actions: { default: act('Ask the driver to switch the engine off when parked.', false, true) },
  },
  mileage_threshold: {
    estimatedCost: null,
    actions: { default: act('Review the service plan for the new mileage.', false, true) },
  },
  fuel_level_low: {
    estimatedCost: null,
    actions: { default: act('Refuel soon.', false, true), medium: act('Refuel now.', true, true) },
  },
  maintenance_due: {
    estimatedCost: null,
    actions: {
      default: act('Schedule the service.', false, true),
      medium: act('Schedule the service soon: it is due.', false, true),
      high: act('Service the vehicle now: it is overdue.', true, true),
    },
  },
};

export const kindProfiles: Readonly<Record<MonitoringKind, KindProfile>> = Object.fromEntries(
  monitoringKinds.map((kind) => [kind, { type: groupOf(kind), ...entries[kind] }]),
) as Record<MonitoringKind, KindProfile>;

/** maintenance_due's estimated cost by item (the maintenance intervals of src/domain/health-config.ts). */
export const maintenanceItemCosts: Readonly<Record<string, string>> = {
  oil_change: '$50–$120',
  tire_rotation: '$25–$75',
  brake_inspection: '$0–$100',
  cooling_system_inspection: '$50–$150',
  transmission_inspection: '$50–$150',
  steering_inspection: '$50–$150',
  engine_air_filter: '$20–$60',
  coolant_change: '$100–$200',
};

export function estimatedCostOf(detection: Pick<Detection, 'kind' | 'key'>): string | null {
  if (detection.kind === 'maintenance_due') return maintenanceItemCosts[detection.key] ?? null;
  return kindProfiles[detection.kind].estimatedCost;
}

export function actionsOf(kind: MonitoringKind, severity: AlertSeverity): MonitoringActions {
  const actions = kindProfiles[kind].actions;
  return { ...(actions[severity] ?? actions.default) };
}
