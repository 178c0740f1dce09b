import { describe, expect, it } from 'vitest';
import { generic } from '../../../providers/generic.js';
import { hmacHex } from '../../../providers/signing.js';

const receivedAt = new Date('2026-05-04T14:05:00Z');
const normalize = (body: unknown) =>
  generic.normalize(
    { contentType: 'application/json', body: typeof body === 'string' ? body : JSON.stringify(body) },
    receivedAt,
  );

function push(body: string, signature?: string) {
  return {
    method: 'POST',
    headers: signature === undefined ? {} : { 'x-signature': signature },
    pathToken: null,
    rawBody: Buffer.from(body),
  };
}

describe('generic adapter', () => {
  it('maps the documented vocabulary, keeps each reading time and unknown keys', () => {
    const result = normalize({
      readings: [
        {
          vehicle: 'truck-12',
          ts: '2026-05-04T14:02:11Z',
          signals: {
            odometer_km: 184023.117,
            fuel_percent: 62,
            battery_voltage: 13.9,
            coolant_temp_c: 88,
            engine_state: 'idle',
            speed_kph: 0,
            location: { lat: 41.85, lon: -87.65, heading: 450 },
            tire_pressure_kpa: { front_left: 758, front_right: 760, rear_left: 700 },
            oil_life_percent: 41,
            dtcs: [{ code: 'p0420' }, 'C1234'],
            check_engine_light: true,
            engine_hours: 4012.5,
            brake_lining_percent: 38,
            adblue_percent: 77,
            events: [{ type: 'hard_brake', g: 0.41 }],
          },
        },
        { vehicle: 'truck-12', ts: '2026-05-04T14:01:00Z', signals: { fuel_percent: 63 } },
      ],
    });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const at = new Date('2026-05-04T14:02:11Z');
    const bySignal = Object.fromEntries(
      result.samples.filter((s) => s.recordedAt.getTime() === at.getTime()).map((s) => [s.signal, s.value]),
    );
    expect(bySignal).toEqual({
      odometer_km: 184023.117,
      fuel_percent: 62,
      battery_voltage: 13.9,
      coolant_temp_c: 88,
      engine_state: 'idle',
      speed_kph: 0,
      location: { lat: 41.85, lon: -87.65, heading: 90 },
      tire_pressure_kpa: { front_left: 758, front_right: 760, rear_left: 700, rear_right: null },
      oil_life_percent: 41,
      dtcs: [
        { code: 'P0420', system: 'powertrain', mil: false },
        { code: 'C1234', system: 'chassis', mil: false },
      ],
      check_engine_light: true,
      engine_hours: 4012.5,
      brake_lining_percent: 38,
      adblue_percent: 77,
    });
    expect(result.samples.find((s) => s.recordedAt.toISOString() === '2026-05-04T14:01:00.000Z')).toMatchObject({
      signal: 'fuel_percent',
      value: 63,
    });
    expect(result.events).toEqual([{ providerVehicleId: 'truck-12', kind: 'hard_brake', recordedAt: at, g: 0.41 }]);
    expect(result.skipped).toEqual([]);
  });

  it('skips bad values with a reason and keeps the rest', () => {
    const result = normalize({
      readings: [
        {
          vehicle: 'v1',
          ts: '2026-05-04T14:00:00Z',
          signals: {
            fuel_percent: 140,
            battery_voltage: 'high',
            engine_state: 'running',
            location: { lat: 0, lon: 0 },
            speed_kph: 50,
            odometer_km: null,
          },
        },
        { vehicle: 'v1', ts: 'yesterday', signals: { fuel_percent: 50 } },
        { ts: '2026-05-04T14:00:00Z', signals: { fuel_percent: 50 } },
        'garbage',
        { vehicle: 'v1', ts: '2026-05-04T14:00:00Z', signals: { events: [{ type: 'donut', g: 3 }] } },
      ],
    });
    if (!result.ok) throw new Error(result.reason);
    expect(result.samples.map((s) => s.signal)).toEqual(['speed_kph']);
    expect(result.skipped.map((s) => s.reason)).toEqual([
      'fuel_percent 140 out of range',
      'battery_voltage is not a number',
      'engine_state running unknown',
      'location 0,0 is no fix',
      'odometer_km is empty',
      'fuel_percent has no valid time',
      'reading without vehicle or signals',
      'reading is not an object',
      'event donut unknown or untimed',
    ]);
  });

  it('rejects payloads that are not JSON or not the documented shape, without throwing', () => {
    expect(normalize('{"readings": [')).toEqual({ ok: false, reason: 'body is not JSON' });
    expect(normalize({ data: [] })).toEqual({ ok: false, reason: 'expected {"readings": [...]}' });
    expect(normalize([])).toEqual({ ok: false, reason: 'expected {"readings": [...]}' });
  });

  it('verifies X-Signature: sha256=<hex HMAC-SHA256 of the raw body>', () => {
    const body = '{"readings":[]}';
    const secret = 'generic-secret';
    const good = `sha256=${hmacHex('sha256', secret, body)}`;
    expect(generic.push!.verify(push(body, good), secret, receivedAt)).toEqual({ ok: true });
    expect(
      generic.push!.verify(push(body, good.toUpperCase().replace('SHA256=', 'sha256=')), secret, receivedAt),
    ).toEqual({ ok: true });
    expect(generic.push!.verify(push(`${body} `, good), secret, receivedAt)).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
    expect(generic.push!.verify(push(body, good), 'other-secret', receivedAt)).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
    expect(generic.push!.verify(push(body, good.replace('sha256=', '')), secret, receivedAt)).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
    expect(generic.push!.verify(push(body), secret, receivedAt)).toEqual({ ok: false, reason: 'missing_signature' });
  });

  it('verifies an optional X-Signature-Timestamp: signed as "<timestamp>.<body>", refused when 5 minutes off', () => {
    const body = '{"readings":[]}';
    const secret = 'generic-secret';
    const now = Math.floor(receivedAt.getTime() / 1000);
    const signed = (timestamp: number | string, signedAs = `${timestamp}.${body}`) => ({
      ...push(body, `sha256=${hmacHex('sha256', secret, signedAs)}`),
      headers: {
        'x-signature': `sha256=${hmacHex('sha256', secret, signedAs)}`,
        'x-signature-timestamp': String(timestamp),
      },
    });
    expect(generic.push!.verify(signed(now - 299), secret, receivedAt)).toEqual({ ok: true });
    expect(generic.push!.verify(signed(now + 299), secret, receivedAt)).toEqual({ ok: true });
    expect(generic.push!.verify(signed(now - 301), secret, receivedAt)).toEqual({
      ok: false,
      reason: 'stale_timestamp',
    });
    // The timestamp is part of what is signed: moving it breaks the signature, not just the window.
    const moved = {
      ...signed(now - 3600),
      headers: { ...signed(now - 3600).headers, 'x-signature-timestamp': String(now) },
    };
    expect(generic.push!.verify(moved, secret, receivedAt)).toEqual({ ok: false, reason: 'bad_signature' });
    // A body-only signature does not pass once a timestamp is sent.
    expect(generic.push!.verify(signed(now, body), secret, receivedAt)).toEqual({ ok: false, reason: 'bad_signature' });
    expect(generic.push!.verify(signed('soon'), secret, receivedAt)).toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('declares its push rules: JSON bodies, a replay key per body, a generated secret', () => {
    const rules = generic.push!;
    expect(rules.bodyProblem('{"readings":[]}', 'application/json')).toBeNull();
    expect(rules.bodyProblem('{"readings": [', 'application/json')).toBe('body is not valid JSON');
    expect(rules.replayKey!(push('{"readings":[]}'))).toBe(rules.replayKey!(push('{"readings":[]}')));
    expect(rules.replayKey!(push('{"readings":[]}'))).not.toBe(rules.replayKey!(push('{"readings":[] }')));
    expect(generic.connection.generatedSecret).toEqual({ when: 'missing', prefix: 'whsec_' });
  });
});
