import { describe, expect, it } from 'vitest';
import type { Sample } from '../../src/domain/sample.js';
import { mergePlans, planIngest } from '../../src/ingest/ingest-plan.js';

const at = (minute: number) => new Date(Date.UTC(2026, 4, 4, 14, minute));
const ids = new Map([
  ['truck-1', 'v-b'],
  ['truck-2', 'v-a'],
]);

function sample(providerVehicleId: string, signal: string, minute: number, value: Sample['value']): Sample {
  return { providerVehicleId, signal, recordedAt: at(minute), value };
}

describe('planIngest', () => {
  it('keeps every reading, and only the newest sample per vehicle and signal for the latest state', () => {
    const plan = planIngest(
      [
        sample('truck-1', 'fuel_percent', 3, 60),
        sample('truck-1', 'fuel_percent', 1, 62),
        sample('truck-1', 'location', 2, { lat: 41.8, lon: -87.6, heading: null }),
        sample('truck-2', 'odometer_km', 4, 1000.5),
        sample('truck-2', 'odometer_km', 2, 1000.1),
      ],
      [],
      ids,
      'samsara',
      'conn-1',
    );
    expect(plan.readings).toHaveLength(5);
    expect(plan.readings[2]).toEqual({
      vehicleId: 'v-b',
      signal: 'location',
      recordedAt: at(2),
      valueNum: null,
      valueJson: { lat: 41.8, lon: -87.6, heading: null },
      source: 'samsara',
    });
    expect(plan.readings[0]).toMatchObject({ valueNum: 60, valueJson: null });
    expect(plan.latest).toEqual([
      { vehicleId: 'v-a', signal: 'odometer_km', recordedAt: at(4), value: 1000.5, source: 'samsara' },
      { vehicleId: 'v-b', signal: 'fuel_percent', recordedAt: at(3), value: 60, source: 'samsara' },
      {
        vehicleId: 'v-b',
        signal: 'location',
        recordedAt: at(2),
        value: { lat: 41.8, lon: -87.6, heading: null },
        source: 'samsara',
      },
    ]);
    expect(plan.vehicleIds).toEqual(['v-a', 'v-b']);
  });

  it('counts samples of unmapped vehicles instead of dropping them silently', () => {
    const plan = planIngest(
      [sample('ghost', 'fuel_percent', 3, 1), sample('ghost', 'speed_kph', 1, 2), sample('truck-1', 'speed_kph', 1, 3)],
      [],
      ids,
      'generic',
      'conn-1',
    );
    expect(plan.unmapped).toEqual([
      { connectionId: 'conn-1', providerVehicleId: 'ghost', samples: 2, firstSeenAt: at(1), lastSeenAt: at(3) },
    ]);
    expect(plan.readings).toHaveLength(1);
  });

  it('maps events of known vehicles and leaves those of unmapped ones out', () => {
    const plan = planIngest(
      [],
      [
        { providerVehicleId: 'truck-2', kind: 'hard_brake', recordedAt: at(2), g: 0.45 },
        { providerVehicleId: 'ghost', kind: 'impact', recordedAt: at(2), g: 3 },
      ],
      ids,
      'motive',
      'conn-1',
    );
    expect(plan.readings).toEqual([]);
    expect(plan.events).toEqual([
      { vehicleId: 'v-a', kind: 'hard_brake', recordedAt: at(2), g: 0.45, source: 'motive' },
    ]);
    // A vehicle with events only is one of the payload's vehicles (locked, and evaluated with its cascade flag).
    expect(plan.vehicleIds).toEqual(['v-a']);
    const withSamples = planIngest(
      [sample('truck-2', 'fuel_percent', 1, 50)],
      [{ providerVehicleId: 'truck-2', kind: 'hard_brake', recordedAt: at(2), g: 0.45 }],
      ids,
      'motive',
      'conn-1',
    );
    expect(withSamples.vehicleIds).toEqual(['v-a']);
  });
});

describe('mergePlans', () => {
  it('keeps every reading, the newest sample per vehicle and signal across payloads, and every vehicle once', () => {
    const first = planIngest(
      [sample('truck-1', 'fuel_percent', 3, 60), sample('truck-2', 'odometer_km', 2, 10)],
      [],
      ids,
      'generic',
      'c',
    );
    const second = planIngest(
      [
        sample('truck-1', 'fuel_percent', 4, 59),
        sample('truck-2', 'odometer_km', 1, 9),
        sample('ghost', 'fuel_percent', 1, 1),
      ],
      [],
      ids,
      'generic',
      'c',
    );
    const merged = mergePlans([first, second]);
    expect(merged.readings).toHaveLength(4);
    expect(merged.latest.map((s) => [s.vehicleId, s.signal, s.value])).toEqual([
      ['v-a', 'odometer_km', 10],
      ['v-b', 'fuel_percent', 59],
    ]);
    expect(merged.vehicleIds).toEqual(['v-a', 'v-b']);
    const third = planIngest([sample('ghost', 'speed_kph', 5, 1)], [], ids, 'generic', 'c');
    expect(mergePlans([second, third]).unmapped).toEqual([
      { connectionId: 'c', providerVehicleId: 'ghost', samples: 2, firstSeenAt: at(1), lastSeenAt: at(5) },
    ]);
    expect(mergePlans([first])).toBe(first);
  });
});
