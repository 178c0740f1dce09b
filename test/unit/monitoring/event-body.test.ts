import { describe, expect, it } from 'vitest';
import { milesToKm } from '../../../src/domain/units.js';
import type { AlertSeverity } from '../../../src/domain/vehicle.js';
import { buildMonitoringEventBody } from '../../../src/monitoring/event-body.js';
import { groupOf, monitoringKinds } from '../../../src/domain/monitoring-kinds.js';
import { actionsOf, kindProfiles, maintenanceItemCosts } from '../../../src/monitoring/profiles.js';
import type { Detection } from '../../../src/monitoring/types.js';
import { defaultHealthConfig } from '../../../src/domain/health-config.js';

const detection: Detection = {
  kind: 'oil_change_needed',
  key: 'oil_change',
  occurredAt: new Date('2026-11-22T06:00:05.250Z'),
  severity: 'high',
  description: 'Oil change overdue by 1200 mi.',
};
const context = {
  eventId: '6f1c2f5e-0000-4000-8000-000000000001',
  subscriptionId: '6f1c2f5e-0000-4000-8000-000000000002',
  vehicleId: '6f1c2f5e-0000-4000-8000-000000000003',
  detectedAt: new Date('2026-11-22T06:00:09.000Z'),
  odometerKm: milesToKm(48_123.46),
  lastServiceAt: new Date('2026-05-02T23:30:00Z'),
};
const severities: AlertSeverity[] = ['info', 'low', 'medium', 'high', 'critical'];

describe('buildMonitoringEventBody', () => {
  it('adds the predictions a premium subscription gets, after actions; without them there is no key', () => {
    const predictions = {
      next_oil_change: 'Overdue (1,200 miles over); last oil change 2026-05-02, every 5,000 miles or 6 months.',
      brake_replacement: null,
      battery_health: 'Good: 12.6 V on 2026-11-21.',
    };
    const premium = buildMonitoringEventBody(detection, { ...context, predictions });
    expect(premium.predictions).toEqual(predictions);
    expect(Object.keys(premium).at(-1)).toBe('predictions');
    expect(JSON.parse(JSON.stringify(premium)).predictions.brake_replacement).toBeNull();
    expect('predictions' in buildMonitoringEventBody(detection, context)).toBe(false);
  });

  it('has exactly the fields of docs/monitoring.md, in order, with times, miles and the service date', () => {
    const body = buildMonitoringEventBody(detection, context);
    expect(body).toEqual({
      event: 'oil_change_needed',
      event_id: context.eventId,
      subscription_id: context.subscriptionId,
      vehicle_id: context.vehicleId,
      timestamp: '2026-11-22T06:00:09.000Z',
      occurred_at: '2026-11-22T06:00:05.250Z',
      severity: 'high',
      details: {
        type: 'maintenance',
        description: 'Oil change overdue by 1200 mi.',
        current_mileage: 48_123.5,
        last_service: '2026-05-02',
        estimated_cost: '$50–$120',
      },
      actions: { recommended: 'Change the oil now: the interval is well overdue.', urgent: true, can_drive: true },
    });
    expect(Object.keys(body)).toEqual([
      'event',
      'event_id',
      'subscription_id',
      'vehicle_id',
      'timestamp',
      'occurred_at',
      'severity',
      'details',
      'actions',
    ]);
    expect(Object.keys(body.details)).toEqual([
      'type',
      'description',
      'current_mileage',
      'last_service',
      'estimated_cost',
    ]);
    expect(Object.keys(body.actions)).toEqual(['recommended', 'urgent', 'can_drive']);
  });

  it('answers null mileage, service and cost when unknown or not applicable', () => {
    const body = buildMonitoringEventBody(
      {
        kind: 'geo_fence_entry',
        key: 'f1',
        occurredAt: context.detectedAt,
        severity: 'info',
        description: 'Entered geofence "Depot".',
      },
      { ...context, odometerKm: null, lastServiceAt: null },
    );
    expect(body.details).toEqual({
      type: 'location',
      description: 'Entered geofence "Depot".',
      current_mileage: null,
      last_service: null,
      estimated_cost: null,
    });
  });

  it('rounds the mileage to 0.1 mi; 0 km is 0 mi, not null', () => {
    const mileage = (km: number) =>
      buildMonitoringEventBody(detection, { ...context, odometerKm: km }).details.current_mileage;
    expect(mileage(0)).toBe(0);
    expect(mileage(1)).toBe(0.6);
    expect(mileage(milesToKm(100.04))).toBe(100);
    expect(mileage(milesToKm(100.05))).toBe(100.1);
  });

  it('maintenance_due costs by item; an item without a known cost has none', () => {
    const due = (key: string) =>
      buildMonitoringEventBody({ ...detection, kind: 'maintenance_due', key, severity: 'low' }, context).details
        .estimated_cost;
    expect(due('tire_rotation')).toBe('$25–$75');
    expect(due('custom_item')).toBeNull();
    for (const item of Object.keys(defaultHealthConfig.maintenance)) expect(maintenanceItemCosts[item]).toBeDefined();
  });
});

describe('kind profiles', () => {
  it('cover every kind with its group as details.type and actions for every severity', () => {
    for (const kind of monitoringKinds) {
      expect(kindProfiles[kind].type).toBe(groupOf(kind));
      for (const severity of severities) {
        const actions = actionsOf(kind, severity);
        expect(actions.recommended.length).toBeGreaterThan(0);
        expect(typeof actions.urgent).toBe('boolean');
        expect(typeof actions.can_drive).toBe('boolean');
      }
    }
  });

  it('escalate with severity where the table says so', () => {
    expect(actionsOf('brake_wear_detected', 'medium')).toMatchObject({ urgent: false, can_drive: true });
    expect(actionsOf('brake_wear_detected', 'high')).toMatchObject({ urgent: true, can_drive: false });
    expect(actionsOf('hard_impact', 'critical')).toMatchObject({ urgent: true, can_drive: false });
    expect(actionsOf('airbag_deployment', 'critical')).toMatchObject({ urgent: true, can_drive: false });
    expect(actionsOf('fuel_level_low', 'medium')).toEqual({
      recommended: 'Refuel now.',
      urgent: true,
      can_drive: true,
    });
  });
});
