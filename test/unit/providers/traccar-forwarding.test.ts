/**
 * A Traccar server's forwarding, as `PositionForwarderJson` and `EventForwarderJson` post it. The
 * fixtures are built from Traccar's model classes (`Position`, `Device`, `Event`, `PositionData`,
 * `EventData`): `id` 0 on a forwarded position, nulls written inside position and device, dates as
 * Jackson writes them.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseTraccarTime, traccar } from '../../../providers/traccar.js';
import type { NormalizeResult } from '../../../providers/types.js';
import { ok, rows } from '../../helpers/normalized.js';

const receivedAt = new Date('2026-11-20T10:30:00Z');
const fixture = (name: string) =>
  readFileSync(new URL(`../../fixtures/providers/traccar/${name}`, import.meta.url), 'utf8').trim();
const forwarded = (name: string) => JSON.parse(fixture(name)) as Record<string, Record<string, unknown>>;
const normalize = (body: unknown, contentType: string | null = 'application/json') =>
  traccar.normalize({ contentType, body: typeof body === 'string' ? body : JSON.stringify(body) }, receivedAt);
const bySignal = (result: NormalizeResult) => Object.fromEntries(ok(result).samples.map((s) => [s.signal, s.value]));
const timeOf = (result: NormalizeResult) =>
  Object.fromEntries(ok(result).samples.map((s) => [s.signal, s.recordedAt.toISOString()]));
const bodyProblem = (body: unknown) =>
  traccar.push!.bodyProblem(typeof body === 'string' ? body : JSON.stringify(body), 'application/json');

/** The Teltonika position of forward-position.json with some fields replaced. */
function position(changes: Record<string, unknown>, attributes?: Record<string, unknown>) {
  const body = forwarded('forward-position.json');
  Object.assign(body.position!, changes);
  if (attributes) body.position!.attributes = attributes;
  return body;
}

const imei = '352093081234567';
const fixTime = '2026-11-20T10:15:30.000Z';

describe('traccar adapter: server forwarding', () => {
  it('maps a forwarded Teltonika position: uniqueId, fixTime, knots, the attributes as the device protocol maps them', () => {
    const result = ok(normalize(fixture('forward-position.json')));
    expect(bySignal(result)).toEqual({
      location: { lat: 41.85003, lon: -87.65005, heading: 87 },
      speed_kph: 54, // 29.157… knots, which Traccar made of the tracker's 54 km/h
      altitude_m: 181, // accuracy 0.0 is Traccar's "not reported": not kept
      priority: 0,
      sat: 14,
      event: 253,
      engine_state: 'on', // ignition
      motion: true,
      rssi: 4,
      io200: 0,
      battery_voltage: 13.907, // power
      device_battery_voltage: 4.072, // battery
      odometer_km: 184023.117, // obdOdometer, metres
      fuel_percent: 62, // fuelLevel
      coolant_temp_c: 88,
      rpm: 1650,
      dtcs: [{ code: 'P0420', system: 'powertrain', mil: false }],
      distance: 15.02, // DistanceHandler's metres since the last position, kept under their name
      total_distance: 1523771.44,
      engine_hours: 4012.5, // hours: 14,445,000,000 ms
    });
    expect(new Set(result.samples.map((s) => s.providerVehicleId))).toEqual(new Set([imei]));
    expect(new Set(Object.values(timeOf(result)))).toEqual(new Set([fixTime]));
    expect(result.events).toEqual([
      { providerVehicleId: imei, kind: 'hard_brake', recordedAt: new Date(fixTime), g: null },
    ]);
    expect(result.skipped).toEqual([]);
  });

  it('an alarm event carries its position: the same samples, and the alarm named twice is one event', () => {
    const fromPosition = ok(normalize(fixture('forward-position.json')));
    const fromEvent = ok(normalize(fixture('forward-event-alarm.json')));
    // The event's position has its database id (48211) where the forwarded one had 0: no key of ours.
    expect(rows(fromEvent)).toEqual(rows(fromPosition));
    expect(fromEvent.events).toEqual(fromPosition.events);
    expect(fromEvent.events).toHaveLength(1);
  });

  it('maps the four alarms that are provider events, from a position or from an event alone', () => {
    const alarms = (alarm: string) =>
      ok(normalize(position({}, { alarm }))).events.map((e) => [e.kind, e.recordedAt.toISOString()]);
    expect(alarms('hardAcceleration,hardCornering,accident,overspeed,lowBattery,hardBraking')).toEqual([
      ['hard_accel', fixTime],
      ['hard_corner', fixTime],
      ['impact', fixTime],
      ['hard_brake', fixTime],
    ]);
    expect(alarms('tow,sos,powerCut')).toEqual([]);

    // An event without a position (none of AlarmEventHandler's, but the body allows it) is timed by eventTime.
    const online = forwarded('forward-event-device-online.json');
    const alone = {
      ...online,
      event: { ...online.event, type: 'alarm', attributes: { alarm: 'accident' } },
    };
    expect(ok(normalize(alone)).events).toEqual([
      { providerVehicleId: imei, kind: 'impact', recordedAt: new Date('2026-11-20T10:14:02.318Z'), g: null },
    ]);
    // Only `alarm` events are read for their alarm: an overspeed event's attributes are its speed and limit.
    const other = { ...online, event: { ...online.event, type: 'deviceOverspeed', attributes: { alarm: 'accident' } } };
    expect(ok(normalize(other)).events).toEqual([]);
  });

  it('an event without a position (deviceOnline) is accepted and writes nothing', () => {
    const body = fixture('forward-event-device-online.json');
    expect(bodyProblem(body)).toBeNull();
    expect(ok(normalize(body))).toMatchObject({ samples: [], events: [], skipped: [] });
  });

  it('a position with valid:false never moves the vehicle: no location, speed or altitude; its attributes still count', () => {
    const result = ok(normalize(fixture('forward-position-invalid.json')));
    const values = bySignal(result);
    expect(values).not.toHaveProperty('location');
    expect(values).not.toHaveProperty('speed_kph');
    expect(values).not.toHaveProperty('altitude_m');
    expect(values).toMatchObject({
      engine_state: 'on',
      battery_voltage: 13.85,
      odometer_km: 184031.9,
      fuel_percent: 61,
      coolant_temp_c: 90,
      sat: 0,
    });
    expect(result.skipped).toEqual([{ reason: 'location fix not valid' }]);
    // Alarms of an invalid fix are events, as Traccar's AlarmEventHandler makes them.
    expect(ok(normalize(position({ valid: false }))).events.map((e) => e.kind)).toEqual(['hard_brake']);
    // Without a GPS speed, the vehicle's own obdSpeed is the speed.
    expect(bySignal(normalize(position({ valid: false }, { obdSpeed: 48 })))).toEqual({ speed_kph: 48 });
  });

  it('an outdated position (the last fix repeated with a status message) keeps its attributes at the device time', () => {
    const fix = ok(normalize(fixture('forward-position-gt06.json')));
    const status = ok(normalize(fixture('forward-position-gt06-status.json')));
    expect(timeOf(fix)).toMatchObject({
      location: '2026-11-20T11:02:00.000Z',
      engine_state: '2026-11-20T11:02:00.000Z',
    });
    // The location is the same reading as the fix's (same vehicle, signal and time); the ignition is new.
    expect(status.samples.find((s) => s.signal === 'location')).toEqual(
      fix.samples.find((s) => s.signal === 'location'),
    );
    expect(timeOf(status)).toMatchObject({
      location: '2026-11-20T11:02:00.000Z',
      speed_kph: '2026-11-20T11:02:00.000Z',
      engine_state: '2026-11-20T11:05:12.441Z',
      device_battery_percent: '2026-11-20T11:05:12.441Z', // batteryLevel
    });
    expect(bySignal(status)).toMatchObject({ engine_state: 'off', device_battery_percent: 100, charge: true });
    // A device clock behind the fix does not date the attributes before the fix.
    const behind = ok(normalize(position({ deviceTime: '2026-11-20T10:15:00.000+00:00' })));
    expect(new Set(Object.values(timeOf(behind)))).toEqual(new Set([fixTime]));
    // No deviceTime at all: the fix time.
    expect(new Set(Object.values(timeOf(normalize(position({ deviceTime: null })))))).toEqual(new Set([fixTime]));
  });

  it('reads dates as Jackson writes them, with and without a colon in the offset', () => {
    const legacy = ok(normalize(fixture('forward-position-legacy.json')));
    expect(new Set(Object.values(timeOf(legacy)))).toEqual(new Set(['2026-11-20T10:27:00.000Z']));
    expect(bySignal(legacy)).toMatchObject({
      location: { lat: 41.86342, lon: -87.63881, heading: 12 },
      speed_kph: 36,
      odometer_km: 184033.4,
    });
    for (const [text, iso] of [
      ['2026-11-20T10:15:30.000+00:00', '2026-11-20T10:15:30.000Z'],
      ['2026-11-20T10:15:30.000+0000', '2026-11-20T10:15:30.000Z'],
      ['2026-11-20T15:45:30.000+05:30', '2026-11-20T10:15:30.000Z'],
      ['2026-11-20T07:15:30.250-0300', '2026-11-20T10:15:30.250Z'],
      ['2026-11-20T10:15:30Z', '2026-11-20T10:15:30.000Z'],
    ] as const) {
      expect(parseTraccarTime(text)?.toISOString(), text).toBe(iso);
      const times = timeOf(normalize(position({ fixTime: text, deviceTime: text })));
      expect(new Set(Object.values(times)), text).toEqual(new Set([iso]));
    }
    for (const bad of [
      '2026-02-31T10:15:30.000+00:00',
      '2026-11-20T24:15:30.000+00:00',
      '2026-11-20T10:15:30.000+25:00',
      '2026-11-20T10:15:30.000+00:60',
      '2026-11-20T10:15:30.000+00:00x',
      '20 Nov 2026 10:15:30 GMT',
      'soon',
    ]) {
      expect(parseTraccarTime(bad), bad).toBeNull();
    }
  });

  it('refuses a forwarded body whose dates do not read, or with no device, whole (400 at the door, nothing half-written)', () => {
    const cases: Array<[unknown, string]> = [
      [position({ fixTime: '2026-02-31T10:15:30.000+00:00' }), 'position.fixTime is not a date'],
      [position({ fixTime: 'yesterday' }), 'position.fixTime is not a date'],
      [position({ fixTime: null }), 'position.fixTime is required'],
      [position({ deviceTime: '2026-11-20 10:15:30 GMT' }), 'position.deviceTime is not a date'],
      [
        { ...forwarded('forward-event-alarm.json'), event: { type: 'alarm', eventTime: 'now' } },
        'event.eventTime is not a date',
      ],
      [
        {
          ...forwarded('forward-position.json'),
          device: { ...forwarded('forward-position.json').device, uniqueId: ' ' },
        },
        'device.uniqueId is required',
      ],
      [{ position: forwarded('forward-position.json').position }, 'device.uniqueId is required'],
      [{ ...forwarded('forward-position.json'), position: [1] }, 'position is not an object'],
      [{ ...forwarded('forward-event-alarm.json'), event: 'alarm' }, 'event is not an object'],
      [
        { event: null, position: null, device: forwarded('forward-position.json').device },
        'expected {position, device} or {event, position, device}',
      ],
    ];
    for (const [body, reason] of cases) {
      expect(bodyProblem(body), reason).toBe(reason);
      expect(normalize(body), reason).toEqual({ ok: false, reason });
    }
    for (const name of ['forward-position.json', 'forward-event-alarm.json', 'forward-position-legacy.json']) {
      expect(bodyProblem(fixture(name)), name).toBeNull();
    }
  });

  it('tells the forms apart by the body: forwarded, OsmAnd JSON and form all still read', () => {
    // `forward.header` may set another content type; the body's first character still says JSON.
    expect(rows(normalize(fixture('forward-position.json'), 'text/plain'))).toEqual(
      rows(normalize(fixture('forward-position.json'))),
    );
    expect(bySignal(normalize(fixture('osmand-client.json')))).toMatchObject({ speed_kph: 54, engine_state: 'on' });
    expect(bodyProblem(fixture('osmand-client.json'))).toBeNull();
    expect(bodyProblem({ location: {} })).toBe('device_id is required');
    // background-geolocation may add a `device` of its own to the OsmAnd JSON: still OsmAnd.
    const phone = { ...JSON.parse(fixture('osmand-client.json')), device: { model: 'Pixel 8', platform: 'Android' } };
    expect(bodyProblem(phone)).toBeNull();
    expect(bySignal(normalize(phone))).toEqual(bySignal(normalize(fixture('osmand-client.json'))));
    expect(bodyProblem({ device: forwarded('forward-position.json').device })).toBe('device_id is required');
    expect(bySignal(normalize('id=7&timestamp=1746367331&fuelLevel=40', null))).toEqual({ fuel_percent: 40 });
    // A numeric uniqueId (not what Device.java writes, but a number is an id) is read as text.
    const numeric = position({});
    numeric.device!.uniqueId = 352093081234567;
    expect(new Set(ok(normalize(numeric)).samples.map((s) => s.providerVehicleId))).toEqual(new Set([imei]));
  });

  it("uses the server's reverse geocoding as the location's address", () => {
    expect(bySignal(normalize(position({ address: '1200 W Harrison St, Chicago, IL' }))).location).toEqual({
      lat: 41.85003,
      lon: -87.65005,
      heading: 87,
      address: '1200 W Harrison St, Chicago, IL',
    });
  });

  it('accepts the token as Authorization: Bearer on the URL without it (forward.header), never in place of a wrong path token', () => {
    const token = 'c0nnection-t0ken';
    const push = (pathToken: string | null, authorization?: string) => ({
      method: 'POST',
      headers: authorization === undefined ? {} : { authorization },
      pathToken,
      rawBody: Buffer.from(fixture('forward-position.json')),
    });
    const verify = (request: ReturnType<typeof push>) => traccar.push!.verify(request, token, receivedAt);
    expect(verify(push(null, `Bearer ${token}`))).toEqual({ ok: true });
    expect(verify(push(null, `bearer  ${token} `))).toEqual({ ok: true });
    expect(verify(push(null, `Bearer ${token}x`))).toEqual({ ok: false, reason: 'bad_signature' });
    expect(verify(push(null, token))).toEqual({ ok: false, reason: 'missing_signature' });
    expect(verify(push(null, 'Bearer '))).toEqual({ ok: false, reason: 'missing_signature' });
    expect(verify(push(null))).toEqual({ ok: false, reason: 'missing_signature' });
    // The path token is the credential when the URL has one.
    expect(verify(push('wrong', `Bearer ${token}`))).toEqual({ ok: false, reason: 'bad_signature' });
    expect(verify(push(token, 'Bearer wrong'))).toEqual({ ok: true });
  });
});
