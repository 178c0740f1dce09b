import { describe, expect, it } from 'vitest';
import { aggressiveAccelerationDetector } from '../../../src/monitoring/detectors/aggressive-acceleration.js';
import { airbagDeploymentDetector } from '../../../src/monitoring/detectors/airbag-deployment.js';
import { hardImpactDetector } from '../../../src/monitoring/detectors/hard-impact.js';
import { rapidDecelerationDetector } from '../../../src/monitoring/detectors/rapid-deceleration.js';
import { brief, detectorVehicle, event, sample } from './detector-harness.js';

const speed = (seconds: number, kph: number) => sample('speed_kph', seconds, kph);
/** The speed change of `g` over `seconds`, km/h. */
const deltaKph = (g: number, seconds: number) => g * 9.81 * 3.6 * seconds;

describe('hard_impact', () => {
  it('an impact event fires high; a peak of 1.5 g on any event fires, 1.49 g does not; 2.5 g is critical', () => {
    expect(brief(detectorVehicle(hardImpactDetector).feed({ events: [event('impact', 5)] }, 10))).toEqual([
      { at: 5, severity: 'high', key: '' },
    ]);
    expect(brief(detectorVehicle(hardImpactDetector).feed({ events: [event('hard_brake', 5, -1.5)] }, 10))).toEqual([
      { at: 5, severity: 'high', key: '' },
    ]);
    expect(detectorVehicle(hardImpactDetector).feed({ events: [event('hard_corner', 5, 1.49)] }, 10)).toEqual([]);
    const major = detectorVehicle(hardImpactDetector).feed({ events: [event('impact', 5, 2.5)] }, 10);
    expect(brief(major)).toEqual([{ at: 5, severity: 'critical', key: '' }]);
    expect(major[0]!.description).toBe('Impact of 2.5 g.');
    expect(brief(detectorVehicle(hardImpactDetector).feed({ events: [event('impact', 5, 2.49)] }, 10))).toEqual([
      { at: 5, severity: 'high', key: '' },
    ]);
  });

  it('one per 30 s window: the window takes its strongest peak within an evaluation, later impacts are absorbed', () => {
    const v = detectorVehicle(hardImpactDetector);
    const first = v.feed({ events: [event('impact', 0, 1.6), event('impact', 0.2, 3.1)] }, 1);
    expect(brief(first)).toEqual([{ at: 0, severity: 'critical', key: '' }]);
    expect(first[0]!.description).toBe('Impact of 3.1 g.');
    expect(v.feed({ events: [event('impact', 29.999, 4)] }, 31)).toEqual([]);
    expect(brief(v.feed({ events: [event('impact', 30, 1.7)] }, 31))).toEqual([{ at: 30, severity: 'high', key: '' }]);
  });

  it('never fires for a late event (older than the newest event read)', () => {
    const v = detectorVehicle(hardImpactDetector);
    expect(v.feed({ events: [event('hard_brake', 100, -0.4)] }, 100)).toEqual([]);
    expect(v.feed({ events: [event('impact', 50, 3)] }, 101)).toEqual([]);
    expect(brief(v.feed({ events: [event('impact', 100, 3)] }, 101))).toEqual([
      { at: 100, severity: 'critical', key: '' },
    ]);
  });
});

describe('rapid_deceleration', () => {
  it('a speed drop of exactly 0.38 g between samples 1 s apart fires; 0.37 g does not', () => {
    const v = detectorVehicle(rapidDecelerationDetector);
    const fired = v.feed({ samples: [speed(0, 60), speed(1, 60 - deltaKph(0.38, 1))] }, 2);
    expect(brief(fired)).toEqual([{ at: 1, severity: 'low', key: '' }]);
    expect(fired[0]!.description).toBe('Hard braking: 0.38 g, 60 → 47 km/h in 1 s.');
    expect(
      detectorVehicle(rapidDecelerationDetector).feed({ samples: [speed(0, 60), speed(1, 60 - deltaKph(0.37, 1))] }, 2),
    ).toEqual([]);
  });

  it('is medium from 0.5 g', () => {
    const v = detectorVehicle(rapidDecelerationDetector);
    expect(brief(v.feed({ samples: [speed(0, 80), speed(1, 80 - deltaKph(0.5, 1))] }, 2))).toEqual([
      { at: 1, severity: 'medium', key: '' },
    ]);
  });

  it('pairs speed samples only up to 2 s apart, and only while moving (8 km/h)', () => {
    const twoSeconds = detectorVehicle(rapidDecelerationDetector);
    expect(twoSeconds.feed({ samples: [speed(0, 60), speed(2, 60 - deltaKph(0.4, 2))] }, 3)).toHaveLength(1);
    const tooFar = detectorVehicle(rapidDecelerationDetector);
    expect(tooFar.feed({ samples: [speed(0, 60), speed(2.001, 60 - deltaKph(0.5, 2.001))] }, 3)).toEqual([]);
    // 8 km/h → 0 in 0.5 s is 0.45 g: counts; 7.9 km/h → 0 does not (parking).
    expect(detectorVehicle(rapidDecelerationDetector).feed({ samples: [speed(0, 8), speed(0.5, 0)] }, 1)).toHaveLength(
      1,
    );
    expect(detectorVehicle(rapidDecelerationDetector).feed({ samples: [speed(0, 7.9), speed(0.5, 0)] }, 1)).toEqual([]);
  });

  it('pairs across evaluations, and ignores a late speed sample', () => {
    const v = detectorVehicle(rapidDecelerationDetector);
    expect(v.feed({ samples: [speed(10, 70)] }, 10)).toEqual([]);
    // A hard brake at 4–5 s, read after 10 s: late, never a detection.
    expect(v.feed({ samples: [speed(4, 90), speed(5, 50)] }, 11)).toEqual([]);
    expect(brief(v.feed({ samples: [speed(11, 50)] }, 11))).toEqual([{ at: 11, severity: 'medium', key: '' }]);
  });

  it('the provider hard_brake event fires; one event per 15 s whatever the source', () => {
    const v = detectorVehicle(rapidDecelerationDetector);
    const fired = v.feed({ events: [event('hard_brake', 0, -0.45)], samples: [speed(5, 60), speed(6, 40)] }, 7);
    expect(brief(fired)).toEqual([{ at: 0, severity: 'low', key: '' }]);
    expect(fired[0]!.description).toBe('Hard braking reported by the vehicle (0.45 g).');
    expect(v.feed({ events: [event('hard_brake', 14.999)] }, 15)).toEqual([]);
    expect(brief(v.feed({ events: [event('hard_brake', 15)] }, 16))).toEqual([{ at: 15, severity: 'low', key: '' }]);
  });

  it('a brake within 30 s of an impact belongs to the collision, before or after it, across evaluations', () => {
    const v = detectorVehicle(rapidDecelerationDetector);
    expect(v.feed({ events: [event('hard_brake', 0, -0.6), event('impact', 2, 2)] }, 3)).toEqual([]);
    expect(v.feed({ samples: [speed(31, 60), speed(32, 30)] }, 33)).toEqual([]);
    expect(brief(v.feed({ samples: [speed(33, 60), speed(34, 30)] }, 35))).toEqual([
      { at: 34, severity: 'medium', key: '' },
    ]);
  });
});

describe('aggressive_acceleration', () => {
  it('+0.37 g fires, +0.36 g does not; the provider hard_accel fires; a 1.5 g hard_accel is an impact', () => {
    expect(
      brief(
        detectorVehicle(aggressiveAccelerationDetector).feed(
          { samples: [speed(0, 20), speed(1, 20 + deltaKph(0.37, 1))] },
          2,
        ),
      ),
    ).toEqual([{ at: 1, severity: 'low', key: '' }]);
    expect(
      detectorVehicle(aggressiveAccelerationDetector).feed(
        { samples: [speed(0, 20), speed(1, 20 + deltaKph(0.36, 1))] },
        2,
      ),
    ).toEqual([]);
    expect(
      brief(detectorVehicle(aggressiveAccelerationDetector).feed({ events: [event('hard_accel', 3, 0.4)] }, 4)),
    ).toEqual([{ at: 3, severity: 'low', key: '' }]);
    expect(detectorVehicle(aggressiveAccelerationDetector).feed({ events: [event('hard_accel', 3, 1.5)] }, 4)).toEqual(
      [],
    );
  });

  it('a start from standstill counts once the vehicle moves (8 km/h); braking never counts', () => {
    expect(
      detectorVehicle(aggressiveAccelerationDetector).feed({ samples: [speed(0, 0), speed(1, 14)] }, 2),
    ).toHaveLength(1);
    expect(detectorVehicle(aggressiveAccelerationDetector).feed({ samples: [speed(0, 60), speed(1, 20)] }, 2)).toEqual(
      [],
    );
  });

  it('15 s cooldown, then fires again; a late event is ignored', () => {
    const v = detectorVehicle(aggressiveAccelerationDetector);
    expect(v.feed({ events: [event('hard_accel', 100)] }, 100)).toHaveLength(1);
    expect(v.feed({ events: [event('hard_accel', 114)] }, 114)).toEqual([]);
    expect(v.feed({ events: [event('hard_accel', 50)] }, 120)).toEqual([]);
    expect(brief(v.feed({ events: [event('hard_accel', 130)] }, 130))).toEqual([{ at: 130, severity: 'low', key: '' }]);
  });
});

describe('airbag_deployment', () => {
  it('is critical, once per incident of 10 minutes, and fires for the next incident', () => {
    const v = detectorVehicle(airbagDeploymentDetector);
    expect(v.feed({ events: [event('impact', 0, 3)] }, 1)).toEqual([]);
    const fired = v.feed({ events: [event('airbag_deployment', 1), event('airbag_deployment', 2)] }, 3);
    expect(brief(fired)).toEqual([{ at: 1, severity: 'critical', key: '' }]);
    expect(v.feed({ events: [event('airbag_deployment', 600.999)] }, 700)).toEqual([]);
    expect(brief(v.feed({ events: [event('airbag_deployment', 601)] }, 700))).toEqual([
      { at: 601, severity: 'critical', key: '' },
    ]);
  });

  it('ignores a late deployment event', () => {
    const v = detectorVehicle(airbagDeploymentDetector);
    expect(v.feed({ events: [event('airbag_deployment', 5000)] }, 5000)).toHaveLength(1);
    expect(v.feed({ events: [event('airbag_deployment', 100)] }, 5001)).toEqual([]);
  });
});
