import { describe, expect, it } from 'vitest';
import type { ActiveAlert } from '../../../src/domain/health.js';
import { absWarningDetector } from '../../../src/monitoring/detectors/abs-warning.js';
import { airbagWarningDetector } from '../../../src/monitoring/detectors/airbag-warning.js';
import { batteryVoltageLowDetector } from '../../../src/monitoring/detectors/battery-voltage-low.js';
import { brakeWearDetectedDetector } from '../../../src/monitoring/detectors/brake-wear-detected.js';
import { checkEngineLightDetector } from '../../../src/monitoring/detectors/check-engine-light.js';
import { coolantTemperatureHighDetector } from '../../../src/monitoring/detectors/coolant-temperature-high.js';
import { maintenanceDueDetector } from '../../../src/monitoring/detectors/maintenance-due.js';
import { oilChangeNeededDetector } from '../../../src/monitoring/detectors/oil-change-needed.js';
import { tirePressureLowDetector } from '../../../src/monitoring/detectors/tire-pressure-low.js';
import { transmissionFaultDetector } from '../../../src/monitoring/detectors/transmission-fault.js';
import { brief, detectorVehicle, sample } from './detector-harness.js';

function alert(
  type: string,
  key: string,
  severity: ActiveAlert['severity'],
  extra: Partial<ActiveAlert> = {},
): ActiveAlert {
  return { key, severity, type, display_name: `${type} ${key}`, due_date: null, due_miles_remaining: null, ...extra };
}
const battery = (severity: ActiveAlert['severity']) => alert('battery_voltage_low', 'battery', severity);
const maintenance = (type: string, severity: ActiveAlert['severity'], overdue = false) =>
  alert(type, type, severity, { due_date: '2026-12-01', overdue });

describe('detectors that follow health alerts', () => {
  it('fires once at the onset, stays silent while the alert holds (even when it escalates), re-arms when it is gone', () => {
    const v = detectorVehicle(batteryVoltageLowDetector);
    expect(v.feed({ alerts: [] }, 0)).toEqual([]);
    const onset = v.feed({ alerts: [battery('medium')], samples: [sample('battery_voltage', 100, 12.0)] }, 130);
    expect(brief(onset)).toEqual([{ at: 100, severity: 'medium', key: '' }]);
    expect(onset[0]!.description).toBe('battery_voltage_low battery.');
    expect(v.feed({ alerts: [battery('medium')] }, 200)).toEqual([]);
    expect(v.feed({ alerts: [battery('high')] }, 300)).toEqual([]);
    expect(v.feed({ alerts: [] }, 400)).toEqual([]);
    expect(v.state).toEqual({ active: [] });
    expect(brief(v.feed({ alerts: [battery('high')] }, 500))).toEqual([{ at: 500, severity: 'high', key: '' }]);
  });

  it('dates the onset at the newest sample of its signals, else now (a timer that ran out in a sweep)', () => {
    const v = detectorVehicle(coolantTemperatureHighDetector);
    const samples = [sample('coolant_temp_c', 10, 106), sample('engine_state', 20, 'on'), sample('speed_kph', 90, 50)];
    expect(brief(v.feed({ alerts: [alert('coolant_temperature_high', 'coolant', 'high')], samples }, 100))).toEqual([
      { at: 20, severity: 'high', key: '' },
    ]);
    const sweep = detectorVehicle(coolantTemperatureHighDetector);
    expect(brief(sweep.feed({ alerts: [alert('coolant_temperature_high', 'coolant', 'high')] }, 70))).toEqual([
      { at: 70, severity: 'high', key: '' },
    ]);
  });

  it('keeps one episode per tire: a second tire fires on its own, a tire re-arms alone', () => {
    const v = detectorVehicle(tirePressureLowDetector);
    const fl = alert('tire_pressure_low', 'front_left', 'low');
    const rr = alert('tire_pressure_low', 'rear_right', 'high');
    expect(brief(v.feed({ alerts: [fl] }, 1))).toEqual([{ at: 1, severity: 'low', key: 'front_left' }]);
    expect(brief(v.feed({ alerts: [fl, rr] }, 2))).toEqual([{ at: 2, severity: 'high', key: 'rear_right' }]);
    expect(v.feed({ alerts: [rr] }, 3)).toEqual([]);
    expect(brief(v.feed({ alerts: [fl, rr] }, 4))).toEqual([{ at: 4, severity: 'low', key: 'front_left' }]);
  });

  it('maps each diagnostic alert type to its kind, one episode per code', () => {
    const alerts = [
      alert('check_engine_light', 'P0301', 'medium'),
      alert('check_engine_light', 'mil', 'medium'),
      alert('abs_warning', 'C0035', 'high'),
      alert('airbag_warning', 'B0001', 'high'),
      alert('transmission_fault', 'P0700', 'high'),
      battery('medium'),
    ];
    const keys = (detector: Parameters<typeof detectorVehicle>[0]) =>
      detectorVehicle(detector)
        .feed({ alerts }, 1)
        .map((d) => d.key);
    expect(keys(checkEngineLightDetector)).toEqual(['P0301', 'mil']);
    expect(keys(absWarningDetector)).toEqual(['C0035']);
    expect(keys(airbagWarningDetector)).toEqual(['B0001']);
    expect(keys(transmissionFaultDetector)).toEqual(['P0700']);

    const v = detectorVehicle(checkEngineLightDetector);
    v.feed({ alerts: [alert('check_engine_light', 'P0301', 'medium')] }, 1);
    expect(
      brief(
        v.feed(
          { alerts: [alert('check_engine_light', 'P0301', 'medium'), alert('check_engine_light', 'P0420', 'medium')] },
          2,
        ),
      ),
    ).toEqual([{ at: 2, severity: 'medium', key: 'P0420' }]);
  });

  it('brake wear follows the brake-lining alert', () => {
    const v = detectorVehicle(brakeWearDetectedDetector);
    expect(brief(v.feed({ alerts: [alert('brake_wear_detected', 'brakes', 'medium')] }, 5))).toEqual([
      { at: 5, severity: 'medium', key: '' },
    ]);
    expect(v.feed({ alerts: [alert('brake_wear_detected', 'brakes', 'high')] }, 6)).toEqual([]);
  });

  it('oil_change_needed follows only the oil_change maintenance item; maintenance_due every item, keyed by item', () => {
    const alerts = [maintenance('oil_change', 'low'), maintenance('tire_rotation', 'medium', true), battery('medium')];
    expect(brief(detectorVehicle(oilChangeNeededDetector).feed({ alerts }, 1))).toEqual([
      { at: 1, severity: 'low', key: 'oil_change' },
    ]);
    expect(brief(detectorVehicle(maintenanceDueDetector).feed({ alerts }, 1))).toEqual([
      { at: 1, severity: 'low', key: 'oil_change' },
      { at: 1, severity: 'medium', key: 'tire_rotation' },
    ]);
    // An alert without the maintenance rule's `overdue` flag is not a maintenance item, whatever its type.
    expect(
      detectorVehicle(oilChangeNeededDetector).feed({ alerts: [alert('oil_change', 'oil_change', 'low')] }, 1),
    ).toEqual([]);
  });

  it('maintenance: due soon → overdue is one episode; a service (alert gone) re-arms; the odometer reading dates it', () => {
    const v = detectorVehicle(maintenanceDueDetector);
    const odometer = [sample('odometer_km', 40, 8000)];
    expect(brief(v.feed({ alerts: [maintenance('oil_change', 'low')], samples: odometer }, 50))).toEqual([
      { at: 40, severity: 'low', key: 'oil_change' },
    ]);
    expect(v.feed({ alerts: [maintenance('oil_change', 'medium', true)] }, 60)).toEqual([]);
    expect(v.feed({ alerts: [] }, 70)).toEqual([]);
    expect(brief(v.feed({ alerts: [maintenance('oil_change', 'low')] }, 80))).toEqual([
      { at: 80, severity: 'low', key: 'oil_change' },
    ]);
  });

  it('keeps its state bounded however many codes a broken feed reports', () => {
    const alerts = Array.from({ length: 200 }, (_, i) => alert('check_engine_light', `P${1000 + i}`, 'medium'));
    const v = detectorVehicle(checkEngineLightDetector);
    expect(v.feed({ alerts }, 1)).toHaveLength(64);
    expect(v.state.active).toHaveLength(64);
  });
});
