import { describe, expect, it } from 'vitest';
import {
  earliestSampleTime,
  maxProviderVehicleIdChars,
  maxSignalNameChars,
  maxUnknownSignalValueBytes,
} from '../../providers/limits.js';
import { normalizeGeneric } from '../../providers/generic.js';
import { maxFutureSkewMs, type ProviderEvent, type Sample } from '../../src/domain/sample.js';
import { sanitizeNormalized, storableText } from '../../src/ingest/sanitize.js';

const receivedAt = new Date('2026-11-20T12:00:00Z');
const at = new Date('2026-11-20T11:00:00Z');

function sample(overrides: Partial<Sample> = {}): Sample {
  return { providerVehicleId: 'truck-1', signal: 'fuel_percent', recordedAt: at, value: 50, ...overrides };
}

/** The samples kept and the reasons counted for one sample alone. */
function check(overrides: Partial<Sample>) {
  const result = sanitizeNormalized([sample(overrides)], [], receivedAt);
  return { kept: result.samples.length, rejected: result.rejected };
}

describe('sanitizeNormalized', () => {
  it('keeps well-formed samples and events as they are', () => {
    const samples = [
      sample(),
      sample({ signal: 'location', value: { lat: 41.8, lon: -87.6, heading: null } }),
      sample({ signal: 'door_state', value: { front: 'open', codes: ['a', 'b'] } }),
      sample({ signal: 'note', value: 'Ünïcödé 🚚 fine' }),
    ];
    const events: ProviderEvent[] = [{ providerVehicleId: 'truck-1', kind: 'hard_brake', recordedAt: at, g: 0.4 }];
    const result = sanitizeNormalized(samples, events, receivedAt);
    expect(result.samples).toEqual(samples);
    expect(result.events).toEqual(events);
    expect(result.rejected).toEqual({});
  });

  it('drops a NUL character anywhere: vehicle id, signal name, text value, nested values and keys', () => {
    for (const overrides of [
      { providerVehicleId: 'truck\u00001' },
      { signal: 'door\u0000state', value: 1 },
      { signal: 'note', value: 'a\u0000b' },
      { signal: 'door_state', value: { inner: [{ deeper: 'x\u0000' }] } },
      { signal: 'door_state', value: { 'key\u0000': 1 } },
      { signal: 'dtcs', value: [{ code: 'P03\u000000', system: 'powertrain', mil: false }] },
    ]) {
      expect(check(overrides)).toEqual({ kept: 0, rejected: { nul_character: 1 } });
    }
  });

  it('drops lone UTF-16 surrogates (not representable in UTF-8 or a JSON escape Postgres accepts)', () => {
    expect(check({ signal: 'note', value: 'broken \ud800 text' })).toEqual({
      kept: 0,
      rejected: { malformed_unicode: 1 },
    });
    expect(check({ providerVehicleId: '\udc00truck' })).toEqual({ kept: 0, rejected: { malformed_unicode: 1 } });
    expect(check({ signal: 'note', value: 'a pair \ud83d\ude9a is fine' }).kept).toBe(1);
  });

  it('drops times before the year 2000 or more than a day after receipt, and invalid times', () => {
    const day = maxFutureSkewMs;
    expect(earliestSampleTime.toISOString()).toBe('2000-01-01T00:00:00.000Z');
    expect(check({ recordedAt: new Date('0000-01-01T00:00:00Z') })).toEqual({
      kept: 0,
      rejected: { time_out_of_range: 1 },
    });
    expect(check({ recordedAt: new Date(earliestSampleTime.getTime() - 1) }).kept).toBe(0);
    expect(check({ recordedAt: earliestSampleTime }).kept).toBe(1);
    expect(check({ recordedAt: new Date(receivedAt.getTime() + day) }).kept).toBe(1);
    expect(check({ recordedAt: new Date(receivedAt.getTime() + day + 1) })).toEqual({
      kept: 0,
      rejected: { time_out_of_range: 1 },
    });
    expect(check({ recordedAt: new Date(Number.NaN) }).rejected).toEqual({ time_out_of_range: 1 });
    const events: ProviderEvent[] = [
      { providerVehicleId: 'truck-1', kind: 'impact', recordedAt: new Date('1970-01-01T00:00:00Z'), g: 3 },
      { providerVehicleId: 'truck-1', kind: 'impact', recordedAt: at, g: 3 },
    ];
    const result = sanitizeNormalized([], events, receivedAt);
    expect(result.events).toEqual([events[1]]);
    expect(result.rejected).toEqual({ time_out_of_range: 1 });
  });

  it('drops provider vehicle ids and signal names past their length limits', () => {
    expect(check({ providerVehicleId: 'v'.repeat(maxProviderVehicleIdChars) }).kept).toBe(1);
    expect(check({ providerVehicleId: 'v'.repeat(maxProviderVehicleIdChars + 1) })).toEqual({
      kept: 0,
      rejected: { id_too_long: 1 },
    });
    expect(check({ signal: 's'.repeat(maxSignalNameChars), value: 1 }).kept).toBe(1);
    expect(check({ signal: 's'.repeat(maxSignalNameChars + 1), value: 1 })).toEqual({
      kept: 0,
      rejected: { name_too_long: 1 },
    });
    const events: ProviderEvent[] = [{ providerVehicleId: 'v'.repeat(1000), kind: 'impact', recordedAt: at, g: 1 }];
    expect(sanitizeNormalized([], events, receivedAt).rejected).toEqual({ id_too_long: 1 });
  });

  it('drops unknown-signal values past the size limit, counted in bytes of their JSON text', () => {
    // JSON text of a string is its characters plus two quotes; "é" is two bytes in UTF-8.
    const fits = 'x'.repeat(maxUnknownSignalValueBytes - 2);
    expect(check({ signal: 'blob', value: fits }).kept).toBe(1);
    expect(check({ signal: 'blob', value: `${fits}x` })).toEqual({ kept: 0, rejected: { value_too_large: 1 } });
    expect(check({ signal: 'blob', value: 'é'.repeat(maxUnknownSignalValueBytes / 2) }).rejected).toEqual({
      value_too_large: 1,
    });
    expect(check({ signal: 'blob', value: { list: Array.from({ length: 2000 }, (_, i) => i) } }).rejected).toEqual({
      value_too_large: 1,
    });
  });

  it('drops values nested too deep to serialize or walk, without throwing', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(check({ signal: 'blob', value: deep as Sample['value'] })).toEqual({
      kept: 0,
      rejected: { value_too_large: 1 },
    });
    // A vocabulary shape with more inside it than the vocabulary reads.
    const location = { lat: 41.8, lon: -87.6, heading: null, extra: deep } as Sample['value'];
    expect(check({ signal: 'location', value: location })).toEqual({ kept: 0, rejected: { value_too_large: 1 } });
  });

  it('reserves the read model fields and holds vocabulary names to the vocabulary', () => {
    expect(check({ signal: 'odometer', value: 5 })).toEqual({ kept: 0, rejected: { reserved_name: 1 } });
    expect(check({ signal: 'observed_at', value: { fuel_percent: '2030-01-01' } })).toEqual({
      kept: 0,
      rejected: { reserved_name: 1 },
    });
    expect(check({ signal: 'location', value: 'garage' })).toEqual({ kept: 0, rejected: { invalid_value: 1 } });
    expect(check({ signal: 'fuel_percent', value: 250 })).toEqual({ kept: 0, rejected: { invalid_value: 1 } });
    expect(check({ signal: 'engine_state', value: 'exploded' })).toEqual({ kept: 0, rejected: { invalid_value: 1 } });
    expect(check({ signal: 'odometer_km', value: 12_000 }).kept).toBe(1);
  });

  it('counts every dropped entry by reason and keeps the rest of the payload', () => {
    const result = sanitizeNormalized(
      [
        sample(),
        sample({ recordedAt: new Date('1999-01-01T00:00:00Z') }),
        sample({ signal: 'odometer', value: 1 }),
        sample({ signal: 'note', value: '\u0000' }),
        sample({ signal: 'speed_kph', value: 40 }),
        sample({ recordedAt: new Date('2040-01-01T00:00:00Z') }),
      ],
      [],
      receivedAt,
    );
    expect(result.samples.map((s) => s.signal)).toEqual(['fuel_percent', 'speed_kph']);
    expect(result.rejected).toEqual({ time_out_of_range: 2, reserved_name: 1, nul_character: 1 });
  });

  it('catches the year-0 timestamp of a generic push (issue 8), which Postgres cannot store', () => {
    const normalized = normalizeGeneric({
      contentType: 'application/json',
      body: JSON.stringify({
        readings: [
          { vehicle: 'truck-1', ts: '0000-01-01T00:00:00Z', signals: { fuel_percent: 10 } },
          { vehicle: 'truck-1', ts: '2026-11-20T11:00:00Z', signals: { fuel_percent: 11 } },
        ],
      }),
    });
    if (!normalized.ok) throw new Error('the generic adapter should accept this payload');
    expect(normalized.samples).toHaveLength(2);
    const result = sanitizeNormalized(normalized.samples, normalized.events, receivedAt);
    expect(result.samples.map((s) => s.value)).toEqual([11]);
    expect(result.rejected).toEqual({ time_out_of_range: 1 });
  });
});

describe('storableText', () => {
  it('removes NUL characters and replaces lone surrogates, leaving pairs alone', () => {
    expect(storableText('a\u0000b \ud800 c \ud83d\ude9a')).toBe('ab \ufffd c \ud83d\ude9a');
  });
});
