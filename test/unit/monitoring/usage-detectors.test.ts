import { describe, expect, it } from 'vitest';
import { milesToKm } from '../../../src/domain/units.js';
import { fuelLevelLowDetector } from '../../../src/monitoring/detectors/fuel-level-low.js';
import {
  mileageThresholdDetector,
  type MileageThresholdState,
} from '../../../src/monitoring/detectors/mileage-threshold.js';
import { defaultMonitoringOptions } from '../../../src/domain/monitoring-kinds.js';
import { at, brief, detectorVehicle, monitoringInput, sample } from './detector-harness.js';

const odometer = (miles: number, seconds: number) => ({ km: milesToKm(miles), at: at(seconds) });
const conflict = { reason: 'conflict' as const, since: at(0).toISOString(), tracker_km: 1 };

describe('mileage_threshold', () => {
  it('fires once when the trusted odometer crosses the threshold (exactly on it counts), never again', () => {
    const v = detectorVehicle(mileageThresholdDetector, { mileageThresholdMiles: 10_000 });
    expect(v.feed({ odometer: odometer(9_999.9, 0) }, 0)).toEqual([]);
    const fired = v.feed({ odometer: odometer(10_000, 60) }, 70);
    expect(brief(fired)).toEqual([{ at: 60, severity: 'info', key: '10000' }]);
    expect(fired[0]!.description).toBe('Odometer passed 10,000 mi (now 10,000 mi).');
    expect(v.feed({ odometer: odometer(10_500, 120) }, 120)).toEqual([]);
    // An anchor correcting the odometer below the threshold, then past it again: still once.
    expect(v.feed({ odometer: odometer(9_000, 180) }, 180)).toEqual([]);
    expect(v.feed({ odometer: odometer(10_100, 240) }, 240)).toEqual([]);
  });

  it('a vehicle already past the threshold when first seen never fires', () => {
    const v = detectorVehicle(mileageThresholdDetector, { mileageThresholdMiles: 10_000 });
    expect(v.feed({ odometer: odometer(10_050, 0) }, 0)).toEqual([]);
    expect(v.feed({ odometer: odometer(10_100, 60) }, 60)).toEqual([]);
  });

  it('is suppressed while the link is in conflict and judged from the last reading once it clears', () => {
    const v = detectorVehicle(mileageThresholdDetector, { mileageThresholdMiles: 10_000 });
    v.feed({ odometer: odometer(9_990, 0) }, 0);
    expect(v.feed({ odometer: odometer(10_010, 60), linkBroken: conflict }, 60)).toEqual([]);
    expect(brief(v.feed({ odometer: odometer(10_020, 120) }, 120))).toEqual([
      { at: 120, severity: 'info', key: '10000' },
    ]);
  });

  it('ignores an odometer older than the last one read', () => {
    const v = detectorVehicle(mileageThresholdDetector, { mileageThresholdMiles: 10_000 });
    v.feed({ odometer: odometer(9_990, 100) }, 100);
    expect(v.feed({ odometer: odometer(10_010, 50) }, 110)).toEqual([]);
    expect(v.state.lastMiles).toBeCloseTo(9_990, 6);
  });

  it('does nothing without a threshold; a changed threshold counts from the last reading', () => {
    const none = detectorVehicle(mileageThresholdDetector);
    none.feed({ odometer: odometer(9_990, 0) }, 0);
    expect(none.feed({ odometer: odometer(20_000, 60) }, 60)).toEqual([]);

    const detect = (state: MileageThresholdState, miles: number, seconds: number, threshold: number) =>
      mileageThresholdDetector.detect(
        state,
        monitoringInput({ odometer: odometer(miles, seconds) }),
        { ...defaultMonitoringOptions, mileageThresholdMiles: threshold },
        at(seconds),
      );
    let result = detect(mileageThresholdDetector.initial(), 9_990, 0, 10_000);
    result = detect(result.state, 10_010, 60, 10_000);
    expect(result.detections).toHaveLength(1);
    // The subscription's threshold changes to 20,000: the 10,000 episode does not block it.
    result = detect(result.state, 19_000, 120, 20_000);
    expect(result.detections).toEqual([]);
    result = detect(result.state, 20_001, 180, 20_000);
    expect(brief(result.detections)).toEqual([{ at: 180, severity: 'info', key: '20000' }]);
  });
});

const fuel = (seconds: number, percent: number) => sample('fuel_percent', seconds, percent);
const engine = (seconds: number, value: string) => sample('engine_state', seconds, value);

describe('fuel_level_low', () => {
  it('fires at or below the threshold held 2 min with the engine running, at the reading that completed it', () => {
    const v = detectorVehicle(fuelLevelLowDetector);
    expect(v.feed({ samples: [engine(0, 'on'), fuel(0, 15)] }, 119)).toEqual([]);
    const fired = v.feed({ samples: [fuel(120, 15)] }, 125);
    expect(brief(fired)).toEqual([{ at: 120, severity: 'low', key: '' }]);
    expect(fired[0]!.description).toBe('Fuel at 15%, at or below 15%.');
    expect(
      detectorVehicle(fuelLevelLowDetector).feed({ samples: [engine(0, 'on'), fuel(0, 15.1), fuel(600, 15.1)] }, 600),
    ).toEqual([]);
  });

  it('confirms in a sweep at `now`; medium at 7 % or below', () => {
    const v = detectorVehicle(fuelLevelLowDetector);
    v.feed({ samples: [engine(0, 'on'), fuel(0, 6)] }, 0);
    expect(brief(v.feed({}, 120))).toEqual([{ at: 120, severity: 'medium', key: '' }]);
  });

  it('one event per episode; re-armed only by a refuel to threshold + 5 points', () => {
    const v = detectorVehicle(fuelLevelLowDetector);
    expect(v.feed({ samples: [engine(0, 'on'), fuel(0, 12)] }, 120)).toHaveLength(1);
    expect(v.feed({ samples: [fuel(200, 19.9), fuel(300, 10), fuel(600, 5)] }, 600)).toEqual([]);
    expect(v.feed({ samples: [fuel(700, 20)] }, 700)).toEqual([]);
    expect(brief(v.feed({ samples: [fuel(800, 14)] }, 920))).toEqual([{ at: 920, severity: 'low', key: '' }]);
  });

  it('honours options.fuelLevelPercent', () => {
    const v = detectorVehicle(fuelLevelLowDetector, { fuelLevelPercent: 25 });
    expect(brief(v.feed({ samples: [engine(0, 'on'), fuel(0, 25)] }, 120))).toEqual([
      { at: 120, severity: 'low', key: '' },
    ]);
    expect(v.feed({ samples: [fuel(200, 29.9), fuel(300, 20)] }, 600)).toEqual([]);
    expect(v.feed({ samples: [fuel(700, 30)] }, 700)).toEqual([]);
    expect(v.feed({ samples: [fuel(800, 24)] }, 920)).toHaveLength(1);
  });

  it('does not count time with the engine off', () => {
    const v = detectorVehicle(fuelLevelLowDetector);
    expect(v.feed({ samples: [engine(0, 'off'), fuel(0, 5)] }, 86_400)).toEqual([]);
  });

  it('ignores late samples', () => {
    const v = detectorVehicle(fuelLevelLowDetector);
    v.feed({ samples: [engine(1000, 'on'), fuel(1000, 80)] }, 1000);
    expect(v.feed({ samples: [fuel(0, 5), fuel(500, 5)] }, 1001)).toEqual([]);
    expect(v.feed({}, 5000)).toEqual([]);
  });
});
