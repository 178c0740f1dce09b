import { describe, expect, it } from 'vitest';
import { readModelPatches } from '../../src/domain/read-model-patch.js';

const at = (minute: number) => new Date(Date.UTC(2026, 10, 20, 10, minute));

describe('readModelPatches', () => {
  it('sets scalars by value, objects with as_of, every time under observed_at, manual odometers only', () => {
    const patches = readModelPatches([
      { vehicleId: 'v1', signal: 'fuel_percent', recordedAt: at(1), value: 62, source: 'samsara' },
      {
        vehicleId: 'v1',
        signal: 'location',
        recordedAt: at(2),
        value: { lat: 41.8, lon: -87.6, heading: 90 },
        source: 'samsara',
      },
      {
        vehicleId: 'v1',
        signal: 'dtcs',
        recordedAt: at(2),
        value: [{ code: 'P0420', system: 'powertrain', mil: true }],
        source: 'samsara',
      },
      { vehicleId: 'v1', signal: 'odometer_km', recordedAt: at(3), value: 1000, source: 'samsara' },
      { vehicleId: 'v1', signal: 'gps_odometer_km', recordedAt: at(4), value: 1001.5, source: 'samsara' },
      { vehicleId: 'v2', signal: 'odometer_km', recordedAt: at(5), value: 50, source: 'manual' },
    ]);
    expect(patches).toEqual([
      {
        vehicleId: 'v1',
        signals: {
          fuel_percent: 62,
          location: { lat: 41.8, lon: -87.6, heading: 90, as_of: '2026-11-20T10:02:00.000Z' },
          dtcs: [{ code: 'P0420', system: 'powertrain', mil: true }],
        },
        observedAt: {
          fuel_percent: '2026-11-20T10:01:00.000Z',
          location: '2026-11-20T10:02:00.000Z',
          dtcs: '2026-11-20T10:02:00.000Z',
          odometer_km: '2026-11-20T10:03:00.000Z',
          gps_odometer_km: '2026-11-20T10:04:00.000Z',
        },
        // Provider odometers reach the read model through the health stage only.
        odometer: null,
      },
      {
        vehicleId: 'v2',
        signals: {},
        observedAt: { odometer_km: '2026-11-20T10:05:00.000Z' },
        odometer: { km: 50, as_of: '2026-11-20T10:05:00.000Z', source: 'manual' },
      },
    ]);
  });
});
