import { describe, expect, it } from 'vitest';
import { excessiveIdlingDetector } from '../../../src/monitoring/detectors/excessive-idling.js';
import { geoFenceEntryDetector } from '../../../src/monitoring/detectors/geo-fence-entry.js';
import { geoFenceExitDetector } from '../../../src/monitoring/detectors/geo-fence-exit.js';
import { speedLimitExceededDetector } from '../../../src/monitoring/detectors/speed-limit-exceeded.js';
import { maxCrossingGapMs } from '../../../src/monitoring/fence-transitions.js';
import { defaultMonitoringOptions } from '../../../src/domain/monitoring-kinds.js';
import type { Geofence } from '../../../src/domain/geo.js';
import { at, brief, detectorVehicle, monitoringInput, sample, type InputParts } from './detector-harness.js';

type Ring = Array<[number, number]>;
const rect = (lon0: number, lat0: number, lon1: number, lat1: number): Ring => [
  [lon0, lat0],
  [lon1, lat0],
  [lon1, lat1],
  [lon0, lat1],
  [lon0, lat0],
];
const depot: Geofence = {
  id: 'f-depot',
  name: 'Depot',
  area: { type: 'Polygon', coordinates: [rect(13.4, 52.5, 13.41, 52.51), rect(13.403, 52.503, 13.407, 52.507)] },
};
const yard: Geofence = {
  id: 'f-yard',
  name: 'Yard',
  area: { type: 'Circle', center: { lat: 52.52, lon: 13.4 }, radius_m: 500 },
};
const geofences = [depot, yard];

const fix = (seconds: number, lat: number, lon: number) => sample('location', seconds, { lat, lon, heading: null });
const outside = (seconds: number) => fix(seconds, 52.495, 13.395);
const inDepot = (seconds: number) => fix(seconds, 52.501, 13.401);
const inHole = (seconds: number) => fix(seconds, 52.505, 13.405);

/** Entry and exit detectors side by side, as a subscription with both kinds runs them. */
function fenceVehicle() {
  const entry = detectorVehicle(geoFenceEntryDetector);
  const exit = detectorVehicle(geoFenceExitDetector);
  return {
    feed(parts: InputParts, nowSeconds: number) {
      const all = [
        ...entry.feed({ geofences, ...parts }, nowSeconds),
        ...exit.feed({ geofences, ...parts }, nowSeconds),
      ];
      return all
        .sort((a, b) => a.occurredAt.getTime() - b.occurredAt.getTime())
        .map((d) => `${(d.occurredAt.getTime() - Date.parse('2026-11-22T06:00:00Z')) / 1000}:${d.kind}:${d.key}`);
    },
  };
}

describe('geo_fence_entry / geo_fence_exit', () => {
  it('the first fix ever known sends nothing, even inside a fence', () => {
    const v = fenceVehicle();
    expect(v.feed({ samples: [inDepot(0)] }, 0)).toEqual([]);
    expect(v.feed({ samples: [inDepot(10)] }, 10)).toEqual([]);
  });

  it('an edge per crossing, entry and exit alternating, across evaluations', () => {
    const v = fenceVehicle();
    expect(v.feed({ samples: [outside(0)] }, 0)).toEqual([]);
    expect(v.feed({ samples: [inDepot(10), inDepot(20)] }, 20)).toEqual(['10:geo_fence_entry:f-depot']);
    expect(v.feed({ samples: [outside(30), outside(40), inDepot(50)] }, 50)).toEqual([
      '30:geo_fence_exit:f-depot',
      '50:geo_fence_entry:f-depot',
    ]);
  });

  it('a hole is outside the fence: driving into it is an exit', () => {
    const v = fenceVehicle();
    v.feed({ samples: [inDepot(0)] }, 0);
    expect(v.feed({ samples: [inHole(10)] }, 10)).toEqual(['10:geo_fence_exit:f-depot']);
  });

  it('two sparse fixes on either side of a fence: entry then exit, at the second fix', () => {
    const v = fenceVehicle();
    v.feed({ samples: [fix(0, 52.5015, 13.39)] }, 0);
    const crossing = detectorVehicle(geoFenceEntryDetector);
    crossing.feed({ geofences, samples: [fix(0, 52.5015, 13.39)] }, 0);
    const [entered] = crossing.feed({ geofences, samples: [fix(600, 52.5015, 13.42)] }, 600);
    expect(entered!.description).toBe('Passed through geofence "Depot" between two location fixes (entered).');
    const exitFirst = detectorVehicle(geoFenceExitDetector);
    exitFirst.feed({ geofences, samples: [fix(0, 52.5015, 13.39)] }, 0);
    expect(exitFirst.feed({ geofences, samples: [fix(600, 52.5015, 13.42)] }, 600)).toHaveLength(1);
    expect(v.feed({ samples: [fix(600, 52.5015, 13.42)] }, 600)).toEqual([
      '600:geo_fence_entry:f-depot',
      '600:geo_fence_exit:f-depot',
    ]);
  });

  it('fixes more than 30 min apart are not joined for crossings', () => {
    const v = fenceVehicle();
    v.feed({ samples: [fix(0, 52.5015, 13.39)] }, 0);
    const gap = maxCrossingGapMs / 1000;
    expect(v.feed({ samples: [fix(gap + 1, 52.5015, 13.42)] }, gap + 1)).toEqual([]);
    expect(v.feed({ samples: [fix(gap + 2, 52.5015, 13.39)] }, gap + 2)).toEqual([
      `${gap + 2}:geo_fence_entry:f-depot`,
      `${gap + 2}:geo_fence_exit:f-depot`,
    ]);
  });

  it('a segment crossing two fences gives both, in list order', () => {
    const v = fenceVehicle();
    v.feed({ samples: [fix(0, 52.495, 13.4005)] }, 0);
    expect(v.feed({ samples: [fix(60, 52.53, 13.4005)] }, 60)).toEqual([
      '60:geo_fence_entry:f-depot',
      '60:geo_fence_entry:f-yard',
      '60:geo_fence_exit:f-depot',
      '60:geo_fence_exit:f-yard',
    ]);
  });

  it('a late fix never creates an edge', () => {
    const v = fenceVehicle();
    v.feed({ samples: [outside(100)] }, 100);
    expect(v.feed({ samples: [inDepot(50)] }, 110)).toEqual([]);
    expect(v.feed({ samples: [outside(120)] }, 120)).toEqual([]);
  });

  it('a fence no longer watched is dropped without an exit; a fence added around the vehicle gives an entry at its next fix', () => {
    const entry = detectorVehicle(geoFenceEntryDetector);
    const exit = detectorVehicle(geoFenceExitDetector);
    entry.feed({ geofences, samples: [inDepot(0)] }, 0);
    exit.feed({ geofences, samples: [inDepot(0)] }, 0);
    expect(exit.feed({ geofences: [yard], samples: [outside(10)] }, 10)).toEqual([]);
    expect(entry.feed({ geofences: [yard], samples: [inDepot(10)] }, 10)).toEqual([]);
    expect(brief(entry.feed({ geofences, samples: [inDepot(20)] }, 20))).toEqual([
      { at: 20, severity: 'info', key: 'f-depot' },
    ]);
  });

  it('skips a location that is not a position', () => {
    const v = fenceVehicle();
    v.feed({ samples: [outside(0)] }, 0);
    expect(v.feed({ samples: [sample('location', 5, { lat: 'x', lon: 1 }), sample('location', 6, null)] }, 6)).toEqual(
      [],
    );
    expect(v.feed({ samples: [inDepot(10)] }, 10)).toEqual(['10:geo_fence_entry:f-depot']);
  });

  it('entry and exit on one input each answer from their own state (a kind subscribed later starts fresh)', () => {
    const entry = detectorVehicle(geoFenceEntryDetector);
    entry.feed({ geofences, samples: [outside(0)] }, 0);
    const input = monitoringInput({ geofences, samples: [inDepot(10)] });
    const stored = JSON.parse(JSON.stringify(entry.state));
    const entered = geoFenceEntryDetector.detect(entry.state, input, defaultMonitoringOptions, at(10));
    expect(brief(entered.detections)).toEqual([{ at: 10, severity: 'info', key: 'f-depot' }]);
    // An equal state (as stored) gets the entry detector's answer: the fences are tested once.
    const exited = geoFenceExitDetector.detect(stored, input, defaultMonitoringOptions, at(10));
    expect(exited.state).toBe(entered.state);
    expect(exited.detections).toEqual([]);
    // An exit detector that has never seen a fix: this one only says where the vehicle is.
    const fresh = geoFenceExitDetector.detect(geoFenceExitDetector.initial(), input, defaultMonitoringOptions, at(10));
    expect(fresh.detections).toEqual([]);
    expect(fresh.state).toEqual(entered.state);
    // And a fresh entry detector on the same input sends nothing either, though the last answer was an entry.
    const freshEntry = geoFenceEntryDetector.detect(
      geoFenceEntryDetector.initial(),
      input,
      defaultMonitoringOptions,
      at(10),
    );
    expect(freshEntry.detections).toEqual([]);
  });
});

const speed = (seconds: number, kph: number) => sample('speed_kph', seconds, kph);

describe('speed_limit_exceeded', () => {
  it('fires once the speed has stayed above the limit for 30 s, not at 29 s', () => {
    const v = detectorVehicle(speedLimitExceededDetector);
    expect(v.feed({ samples: [speed(0, 130), speed(10, 131), speed(29, 132)] }, 29)).toEqual([]);
    const fired = v.feed({ samples: [speed(30, 129)] }, 30);
    expect(brief(fired)).toEqual([{ at: 30, severity: 'low', key: '' }]);
    expect(fired[0]!.description).toBe('Speed above 120 km/h for 30 s, up to 132 km/h.');
  });

  it('once per episode; a sample at exactly the limit re-arms; the limit itself is not over', () => {
    const v = detectorVehicle(speedLimitExceededDetector);
    expect(v.feed({ samples: [speed(0, 125), speed(30, 125), speed(60, 125), speed(90, 125)] }, 90)).toHaveLength(1);
    expect(v.feed({ samples: [speed(100, 120), speed(110, 125)] }, 110)).toEqual([]);
    expect(brief(v.feed({ samples: [speed(140, 125)] }, 140))).toEqual([{ at: 140, severity: 'low', key: '' }]);
    const atLimit = detectorVehicle(speedLimitExceededDetector);
    expect(atLimit.feed({ samples: [speed(0, 120), speed(60, 120)] }, 60)).toEqual([]);
  });

  it('a dip under the limit restarts the 30 s', () => {
    const v = detectorVehicle(speedLimitExceededDetector);
    expect(v.feed({ samples: [speed(0, 130), speed(20, 119), speed(25, 130), speed(50, 130)] }, 50)).toEqual([]);
    expect(v.feed({ samples: [speed(55, 130)] }, 55)).toHaveLength(1);
  });

  it('honours options.speedLimitKph and grades severity by the excess in mph', () => {
    const episode = (kph: number) =>
      brief(
        detectorVehicle(speedLimitExceededDetector, { speedLimitKph: 80 }).feed(
          { samples: [speed(0, kph), speed(30, 81)] },
          30,
        ),
      );
    // 10 mph = 16.09 km/h; 20 mph = 32.19 km/h.
    expect(episode(96)).toEqual([{ at: 30, severity: 'low', key: '' }]);
    expect(episode(97)).toEqual([{ at: 30, severity: 'medium', key: '' }]);
    expect(episode(112)).toEqual([{ at: 30, severity: 'medium', key: '' }]);
    expect(episode(113)).toEqual([{ at: 30, severity: 'high', key: '' }]);
    expect(
      detectorVehicle(speedLimitExceededDetector, { speedLimitKph: 140 }).feed(
        { samples: [speed(0, 130), speed(60, 130)] },
        60,
      ),
    ).toEqual([]);
  });

  it('ignores late samples; a gap of more than 5 min between samples restarts the episode', () => {
    const v = detectorVehicle(speedLimitExceededDetector);
    v.feed({ samples: [speed(100, 130)] }, 100);
    expect(v.feed({ samples: [speed(20, 130), speed(50, 130)] }, 101)).toEqual([]);
    expect(v.feed({ samples: [speed(401, 130)] }, 401)).toEqual([]);
    expect(v.feed({ samples: [speed(431, 130)] }, 431)).toHaveLength(1);
  });
});

const engine = (seconds: number, value: string) => sample('engine_state', seconds, value);

describe('excessive_idling', () => {
  it('fires when `now` passes the idle threshold without a new sample (the sweep), once', () => {
    const v = detectorVehicle(excessiveIdlingDetector);
    expect(v.feed({ samples: [engine(0, 'on'), speed(0, 0), fix(0, 52.5, 13.4)] }, 599)).toEqual([]);
    const fired = v.feed({}, 600);
    expect(brief(fired)).toEqual([{ at: 600, severity: 'low', key: '' }]);
    expect(fired[0]!.description).toBe('Engine idling for 10 min without moving.');
    expect(v.feed({ samples: [speed(700, 0.5)] }, 3600)).toEqual([]);
  });

  it('dates the event at the threshold even when it is found later, at a sample', () => {
    const v = detectorVehicle(excessiveIdlingDetector);
    v.feed({ samples: [engine(0, 'idle'), speed(0, 1)] }, 0);
    expect(brief(v.feed({ samples: [speed(900, 30)] }, 900))).toEqual([{ at: 600, severity: 'low', key: '' }]);
  });

  it('speed 2 km/h is moving, 1.9 is not; the engine off or moving re-arms', () => {
    const moving = detectorVehicle(excessiveIdlingDetector);
    expect(moving.feed({ samples: [engine(0, 'on'), speed(0, 2)] }, 3600)).toEqual([]);
    const v = detectorVehicle(excessiveIdlingDetector);
    expect(v.feed({ samples: [engine(0, 'on'), speed(0, 1.9)] }, 600)).toHaveLength(1);
    expect(v.feed({ samples: [engine(700, 'off')] }, 700)).toEqual([]);
    expect(v.feed({ samples: [engine(800, 'on')] }, 1399)).toEqual([]);
    expect(brief(v.feed({}, 1400))).toEqual([{ at: 1400, severity: 'low', key: '' }]);
  });

  it('a fix more than 50 m from where the idle began is movement; 40 m of GPS jitter is not', () => {
    const north = (metres: number) => 52.5 + (metres / 6_371_008.8) * (180 / Math.PI);
    const jitter = detectorVehicle(excessiveIdlingDetector);
    jitter.feed({ samples: [engine(0, 'on'), speed(0, 0), fix(0, 52.5, 13.4)] }, 0);
    expect(jitter.feed({ samples: [fix(300, north(40), 13.4)] }, 600)).toHaveLength(1);
    const moved = detectorVehicle(excessiveIdlingDetector);
    moved.feed({ samples: [engine(0, 'on'), speed(0, 0), fix(0, 52.5, 13.4)] }, 0);
    expect(moved.feed({ samples: [fix(300, north(60), 13.4)] }, 600)).toEqual([]);
    // The idle starts over at the move: 10 min from 300 s.
    expect(brief(moved.feed({}, 900))).toEqual([{ at: 900, severity: 'low', key: '' }]);
  });

  it('without speed, `engine_state` idle counts as standing still and `on` does not', () => {
    expect(detectorVehicle(excessiveIdlingDetector).feed({ samples: [engine(0, 'idle')] }, 600)).toHaveLength(1);
    expect(detectorVehicle(excessiveIdlingDetector).feed({ samples: [engine(0, 'on')] }, 600)).toEqual([]);
  });

  it('honours options.idleMinutes (30 min or more is medium)', () => {
    const v = detectorVehicle(excessiveIdlingDetector, { idleMinutes: 30 });
    expect(v.feed({ samples: [engine(0, 'on'), speed(0, 0)] }, 1799)).toEqual([]);
    expect(brief(v.feed({}, 1800))).toEqual([{ at: 1800, severity: 'medium', key: '' }]);
  });

  it('ignores late samples', () => {
    const v = detectorVehicle(excessiveIdlingDetector);
    v.feed({ samples: [engine(1000, 'off'), speed(1000, 50)] }, 1000);
    // An idle from 0 to 900, read late: never a detection.
    expect(v.feed({ samples: [engine(0, 'on'), speed(0, 0), speed(900, 0)] }, 1000)).toEqual([]);
    expect(v.state.idleSinceMs).toBeNull();
  });
});
