import { describe, expect, it } from 'vitest';
import { foldLatestState, type StoredLatestState } from '../../../src/domain/latest-state.js';
import type { LatestSample } from '../../../src/domain/sample.js';

const vehicle = 'a0000000-0000-4000-8000-000000000001';
const other = 'a0000000-0000-4000-8000-000000000002';

const sample = (signal: string, at: string, value: unknown, source = 'samsara', vehicleId = vehicle): LatestSample => ({
  vehicleId,
  signal,
  recordedAt: new Date(at),
  value,
  source,
});

const row = (
  signals: Record<string, unknown>,
  options: { odometerValues?: Record<string, unknown>; ownedSinceMs?: number } = {},
): StoredLatestState => ({
  signals,
  odometerValues: options.odometerValues ?? {},
  ownedSinceMs: options.ownedSinceMs ?? null,
});

describe('foldLatestState', () => {
  it('writes each signal newer than its stored time, and skips older samples and replays', () => {
    const stored = new Map([
      [
        vehicle,
        row({
          fuel_percent: 40,
          battery_voltage: 12.4,
          observed_at: { fuel_percent: '2026-11-29T10:00:00.000Z', battery_voltage: '2026-11-29T10:00:00.000Z' },
        }),
      ],
    ]);
    const [patch, ...rest] = foldLatestState(
      [
        sample('fuel_percent', '2026-11-29T10:05:00.000Z', 38),
        sample('battery_voltage', '2026-11-29T09:59:00.000Z', 12.1),
        sample('coolant_temp_c', '2026-11-29T10:01:00.000Z', 90),
      ],
      stored,
    );
    expect(rest).toEqual([]);
    expect(patch).toEqual({
      vehicleId: vehicle,
      signals: { fuel_percent: 38, coolant_temp_c: 90 },
      observedAt: { fuel_percent: '2026-11-29T10:05:00.000Z', coolant_temp_c: '2026-11-29T10:01:00.000Z' },
      odometerValues: {},
      // The batch's newest sample, winning or not.
      newestAt: '2026-11-29T10:05:00.000Z',
      ecuOdometerAt: null,
      valueChanged: true,
    });
    // The same samples again: nothing is newer, no patch.
    expect(foldLatestState([sample('fuel_percent', '2026-11-29T10:00:00.000Z', 40)], stored)).toEqual([]);
  });

  it('compares with a stored time that has digits past the millisecond exactly', () => {
    const stored = new Map([
      [vehicle, row({ fuel_percent: 40, observed_at: { fuel_percent: '2026-11-29T10:00:00.000500Z' } })],
    ]);
    expect(foldLatestState([sample('fuel_percent', '2026-11-29T10:00:00.000Z', 41)], stored)).toEqual([]);
    expect(foldLatestState([sample('fuel_percent', '2026-11-29T10:00:00.001Z', 41)], stored)).toHaveLength(1);
  });

  it('moves updated_at only for a changed value: an object compared without its as_of, a repeated value silently', () => {
    const location = { lat: 52.52, lon: 13.405 };
    const stored = new Map([
      [
        vehicle,
        row({
          fuel_percent: 40,
          location: { ...location, as_of: '2026-11-29T10:00:00.000Z' },
          dtcs: [{ code: 'P0300' }],
          observed_at: {
            fuel_percent: '2026-11-29T10:00:00.000Z',
            location: '2026-11-29T10:00:00.000Z',
            dtcs: '2026-11-29T10:00:00.000Z',
          },
        }),
      ],
    ]);
    const later = '2026-11-29T10:01:00.000Z';
    const [same] = foldLatestState(
      [
        sample('fuel_percent', later, 40),
        sample('location', later, { lon: 13.405, lat: 52.52 }),
        sample('dtcs', later, [{ code: 'P0300' }]),
      ],
      stored,
    );
    expect(same!.valueChanged).toBe(false);
    expect(same!.signals.location).toEqual({ ...location, as_of: later });
    expect(same!.observedAt).toEqual({ fuel_percent: later, location: later, dtcs: later });

    for (const changed of [
      sample('location', later, { lat: 52.53, lon: 13.405 }),
      sample('dtcs', later, [{ code: 'P0300' }, { code: 'P0171' }]),
      sample('engine_state', later, 'on'),
    ]) {
      expect(foldLatestState([changed], stored)[0]!.valueChanged).toBe(true);
    }
  });

  it('keeps the odometer series in odometer_values; only a manual reading sets the odometer, never over a newer one', () => {
    const stored = new Map([
      [
        vehicle,
        row(
          {
            odometer: { km: 1000, as_of: '2026-11-29T09:00:00.000Z', source: 'samsara' },
            observed_at: { odometer_km: '2026-11-29T09:00:00.000Z' },
          },
          { odometerValues: { odometer_km: 1000 } },
        ),
      ],
    ]);
    const [provider] = foldLatestState([sample('odometer_km', '2026-11-29T10:00:00.000Z', 1010)], stored);
    expect(provider).toMatchObject({
      signals: {},
      odometerValues: { odometer_km: 1010 },
      ecuOdometerAt: '2026-11-29T10:00:00.000Z',
      valueChanged: true,
    });

    const [manual] = foldLatestState([sample('odometer_km', '2026-11-29T10:00:00.000Z', 1020, 'manual')], stored);
    expect(manual).toMatchObject({
      signals: { odometer: { km: 1020, as_of: '2026-11-29T10:00:00.000Z', source: 'manual' } },
      odometerValues: { odometer_km: 1020 },
      ecuOdometerAt: null,
    });

    const newerOdometer = new Map([
      [
        vehicle,
        row(
          { odometer: { km: 1100, as_of: '2026-11-29T11:00:00.000Z', source: 'samsara' }, observed_at: {} },
          { odometerValues: {} },
        ),
      ],
    ]);
    const [late] = foldLatestState([sample('odometer_km', '2026-11-29T10:00:00.000Z', 1020, 'manual')], newerOdometer);
    expect(late!.signals).toEqual({});
    expect(late!.odometerValues).toEqual({ odometer_km: 1020 });
  });

  it("advances the ECU odometer time to the batch's newest provider odometer, winning or not", () => {
    const stored = new Map([[vehicle, row({ observed_at: { odometer_km: '2026-11-29T10:00:00.000Z' } })]]);
    const [patch] = foldLatestState(
      [sample('odometer_km', '2026-11-29T09:00:00.000Z', 900), sample('fuel_percent', '2026-11-29T08:00:00.000Z', 50)],
      stored,
    );
    expect(patch).toMatchObject({ ecuOdometerAt: '2026-11-29T09:00:00.000Z', newestAt: '2026-11-29T09:00:00.000Z' });
    expect(patch!.observedAt).toEqual({ fuel_percent: '2026-11-29T08:00:00.000Z' });
  });

  it("never writes a sample from before the current owner's span, except the odometer series", () => {
    // A span that began at 10:00:00.000250, rounded up to the millisecond as the row is read.
    const ownedSinceMs = Date.parse('2026-11-29T10:00:00.001Z');
    const stored = new Map([[vehicle, row({ observed_at: {} }, { ownedSinceMs })]]);
    expect(foldLatestState([sample('fuel_percent', '2026-11-29T10:00:00.000Z', 40)], stored)).toEqual([]);
    expect(foldLatestState([sample('fuel_percent', '2026-11-29T10:00:00.001Z', 40)], stored)).toHaveLength(1);
    const [odometer] = foldLatestState([sample('odometer_km', '2026-11-29T09:00:00.000Z', 500)], stored);
    expect(odometer!.odometerValues).toEqual({ odometer_km: 500 });
  });

  it('answers one patch per vehicle whatever the order, and skips vehicles no longer stored', () => {
    const stored = new Map([
      [vehicle, row({ observed_at: {} })],
      [other, row({ observed_at: {} })],
    ]);
    const patches = foldLatestState(
      [
        sample('fuel_percent', '2026-11-29T10:00:00.000Z', 40),
        sample('fuel_percent', '2026-11-29T10:00:00.000Z', 60, 'samsara', other),
        sample('battery_voltage', '2026-11-29T10:00:00.000Z', 12.5),
        sample('fuel_percent', '2026-11-29T10:00:00.000Z', 70, 'samsara', 'a0000000-0000-4000-8000-000000000009'),
      ],
      stored,
    );
    expect(patches.map((p) => [p.vehicleId, p.signals])).toEqual([
      [vehicle, { fuel_percent: 40, battery_voltage: 12.5 }],
      [other, { fuel_percent: 60 }],
    ]);
  });
});
