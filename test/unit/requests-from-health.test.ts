import { describe, expect, it } from 'vitest';
import type { VehicleAlert } from '../../src/domain/vehicle.js';
import { planHealthRequests } from '../../src/runs/requests-from-health.js';

const alert = (type: string, severity: VehicleAlert['severity'], display: string): VehicleAlert => ({
  type,
  severity,
  display_name: display,
  due_date: null,
  due_miles_remaining: null,
});

describe('planHealthRequests', () => {
  it('turns a critical status into items from the critical and high alerts', () => {
    const requests = planHealthRequests(
      [{ id: 1, vehicleId: 'v1', kind: 'status_changed', payload: { from: 'ok', to: 'critical' } }],
      new Map([
        [
          'v1',
          [
            alert('coolant_temperature_high', 'critical', 'Coolant 113 °C'),
            alert('abs_warning', 'high', 'ABS: C0035'),
            alert('fuel_level_low', 'low', 'Fuel low'),
          ],
        ],
      ]),
    );
    expect(requests.get('v1')).toEqual([
      { title: 'Coolant 113 °C', description: 'Raised by vehicle health (critical)', type: 'coolant_temperature_high' },
      { title: 'ABS: C0035', description: 'Raised by vehicle health (high)', type: 'abs_warning' },
    ]);
  });

  it('turns an overdue maintenance alert into one item of its type; due-soon and other statuses ask for nothing', () => {
    const requests = planHealthRequests(
      [
        {
          id: 1,
          vehicleId: 'v1',
          kind: 'alert_opened',
          payload: { type: 'oil_change', display_name: 'Oil change overdue by 120 mi', overdue: true },
        },
        {
          id: 2,
          vehicleId: 'v1',
          kind: 'alert_changed',
          payload: { type: 'oil_change', display_name: 'Oil change overdue by 1200 mi', overdue: true },
        },
        {
          id: 3,
          vehicleId: 'v2',
          kind: 'alert_opened',
          payload: { type: 'tire_rotation', display_name: 'Tire rotation due in 300 mi', overdue: false },
        },
        { id: 4, vehicleId: 'v3', kind: 'status_changed', payload: { from: 'ok', to: 'needs_attention' } },
        { id: 5, vehicleId: 'v4', kind: 'alert_resolved', payload: { type: 'oil_change', overdue: true } },
      ],
      new Map(),
    );
    expect([...requests]).toEqual([
      ['v1', [{ title: 'Oil change', description: 'Oil change overdue by 120 mi', type: 'oil_change' }]],
    ]);
  });
});
