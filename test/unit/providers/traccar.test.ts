import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { snakeCase, traccar } from '../../../providers/traccar.js';
import type { NormalizeResult } from '../../../providers/types.js';
import { ok } from '../../helpers/normalized.js';

const receivedAt = new Date('2026-05-04T14:05:00Z');
const fixture = (name: string) =>
  readFileSync(new URL(`../../fixtures/providers/traccar/${name}`, import.meta.url), 'utf8').trim();
const query = (body: string) => traccar.normalize({ contentType: null, body }, receivedAt);
const form = (body: string) =>
  traccar.normalize({ contentType: 'application/x-www-form-urlencoded; charset=utf-8', body }, receivedAt);
const json = (body: unknown) =>
  traccar.normalize(
    { contentType: 'application/json', body: typeof body === 'string' ? body : JSON.stringify(body) },
    receivedAt,
  );

const bySignal = (result: NormalizeResult) => Object.fromEntries(ok(result).samples.map((s) => [s.signal, s.value]));
const times = (result: NormalizeResult) => [...new Set(ok(result).samples.map((s) => s.recordedAt.toISOString()))];

function push(pathToken: string | null, query = '') {
  return { method: 'GET', headers: {}, pathToken, rawBody: Buffer.from(query) };
}

describe('traccar adapter (OsmAnd)', () => {
  it('maps the documented GET query: knots, GPS odometer in metres, ignition, alarm', () => {
    const result = ok(query(fixture('osmand-get.txt')));
    const values = bySignal(result);
    expect(values.speed_kph).toBeCloseTo(29.2 * 1.852, 9); // 54.08 km/h from knots
    expect({ ...values, speed_kph: undefined }).toEqual({
      location: { lat: 41.85003, lon: -87.65005, heading: 87 },
      speed_kph: undefined,
      device_battery_percent: 88,
      engine_state: 'on',
      gps_odometer_km: 184023.117,
      fuel_percent: 62,
      coolant_temp_c: 88,
      battery_voltage: 13.9,
    });
    // `odometer` is GPS-derived: never the vehicle odometer.
    expect(values).not.toHaveProperty('odometer_km');
    expect(times(result)).toEqual(['2025-05-04T14:02:11.000Z']);
    expect(result.samples.every((s) => s.providerVehicleId === '358240051111110')).toBe(true);
    expect(result.events).toEqual([
      {
        providerVehicleId: '358240051111110',
        kind: 'hard_brake',
        recordedAt: new Date('2025-05-04T14:02:11Z'),
        g: null,
      },
    ]);
    expect(result.skipped).toEqual([]);
  });

  it('maps the documented JSON body: speed in m/s, app odometer kept apart, battery fraction, extras as attributes', () => {
    const result = ok(json(fixture('osmand-client.json')));
    expect(bySignal(result)).toEqual({
      location: { lat: 41.85003, lon: -87.65005, heading: 87 },
      speed_kph: 54, // 15 m/s
      altitude_m: 181,
      accuracy_m: 5,
      app_odometer_m: 1523,
      is_moving: true,
      device_battery_percent: 88,
      device_battery_charging: false,
      engine_state: 'on',
      coolant_temp_c: 88,
    });
    expect(times(result)).toEqual(['2026-05-04T14:02:11.000Z']);
    expect(result.events).toEqual([]);
    expect(result.skipped).toEqual([]);
    // Without a content type the JSON body is still recognised.
    expect(bySignal(traccar.normalize({ contentType: null, body: fixture('osmand-client.json') }, receivedAt))).toEqual(
      bySignal(result),
    );
  });

  it('maps a form POST: deviceid, location=lat,lon, OBD odometer, hours, dtcs, obdSpeed, litres, volts and every alarm kind', () => {
    const result = ok(form(fixture('osmand-form.txt')));
    expect(bySignal(result)).toEqual({
      location: { lat: 41.85003, lon: -87.65005, heading: 270 },
      altitude_m: 181,
      odometer_km: 184023.117, // obdOdometer, metres
      gps_odometer_km: 183990.5, // odometer, metres
      speed_kph: 54, // obdSpeed (km/h) used because no GPS speed was sent
      rpm: 1650,
      fuel_liters: 48.5,
      fuel_percent: 61,
      battery_voltage: 14.1, // power
      device_battery_voltage: 4.1, // battery
      engine_hours: 4012.5, // 14,445,000,000 ms
      dtcs: [
        { code: 'P0420', system: 'powertrain', mil: false },
        { code: 'P0171', system: 'powertrain', mil: false },
      ],
      engine_state: 'on',
      fuel_used: 12.5,
      driver_unique_id: 'D-1002',
      motion: true,
      io1: 0,
    });
    expect(times(result)).toEqual(['2026-05-04T14:02:11.000Z']);
    const at = new Date('2026-05-04T14:02:11Z');
    expect(result.events).toEqual([
      { providerVehicleId: 'obd-77', kind: 'hard_accel', recordedAt: at, g: null },
      { providerVehicleId: 'obd-77', kind: 'hard_corner', recordedAt: at, g: null },
      { providerVehicleId: 'obd-77', kind: 'impact', recordedAt: at, g: null },
    ]);
    expect(result.skipped).toEqual([]);
  });

  it('reads every timestamp form, UTC for zone-less text, and the arrival time when none is sent', () => {
    const at = (timestamp: string | null) =>
      times(query(`id=7&lat=1&lon=2${timestamp === null ? '' : `&timestamp=${timestamp}`}`));
    expect(at('1746367331')).toEqual(['2025-05-04T14:02:11.000Z']); // unix seconds
    expect(at('1746367331250')).toEqual(['2025-05-04T14:02:11.250Z']); // unix milliseconds
    expect(at('2026-05-04T14:02:11Z')).toEqual(['2026-05-04T14:02:11.000Z']);
    expect(at('2026-05-04T16:02:11.5%2B02:00')).toEqual(['2026-05-04T14:02:11.500Z']);
    expect(at('2026-05-04T14:02:11')).toEqual(['2026-05-04T14:02:11.000Z']);
    expect(at('2026-05-04%2014:02:11')).toEqual(['2026-05-04T14:02:11.000Z']);
    expect(at('2026-05-04+14:02:11')).toEqual(['2026-05-04T14:02:11.000Z']);
    expect(at(null)).toEqual([receivedAt.toISOString()]);
    for (const bad of ['yesterday', '2026-02-31+10:00:00', '2026-05-04+24:00:00', 'May+4+2026', '']) {
      const result = ok(query(`id=7&lat=1&lon=2&speed=1&timestamp=${bad}`));
      expect(result.samples, bad).toEqual([]);
      expect(
        result.skipped.map((s) => s.reason),
        bad,
      ).toEqual(['location has no valid time', 'speed_kph has no valid time']);
    }
    expect(ok(query('id=7&timestamp=nope&alarm=accident')).skipped).toEqual([{ reason: 'event impact untimed' }]);
  });

  it('converts knots and prefers GPS speed over obdSpeed, keeping the OBD value apart', () => {
    expect(bySignal(query('id=7&speed=10'))).toEqual({ speed_kph: 18.52 });
    expect(bySignal(query('id=7&speed=0'))).toEqual({ speed_kph: 0 });
    expect(bySignal(query('id=7&speed=10&obdSpeed=19'))).toEqual({ speed_kph: 18.52, obd_speed_kph: 19 });
    expect(bySignal(query('id=7&obdSpeed=19'))).toEqual({ speed_kph: 19 });
    expect(
      bySignal(
        json({
          device_id: 7,
          location: { timestamp: 1746367331, coords: { latitude: 1, longitude: 2, speed: 10, heading: -1 } },
        }),
      ),
    ).toEqual({
      location: { lat: 1, lon: 2, heading: null }, // -1: the phone does not know its course
      speed_kph: 36,
    });
  });

  it('rejects a payload without a device id or that cannot be read, without throwing', () => {
    expect(query('timestamp=1746367331&lat=41.85&lon=-87.65')).toEqual({
      ok: false,
      reason: 'missing device id (id or deviceid)',
    });
    expect(query('id=&lat=1&lon=2')).toEqual({ ok: false, reason: 'missing device id (id or deviceid)' });
    expect(query('')).toEqual({ ok: false, reason: 'body is not an OsmAnd query' });
    expect(query('just some text')).toEqual({ ok: false, reason: 'missing device id (id or deviceid)' });
    expect(json('{"device_id": "1", "location": {')).toEqual({ ok: false, reason: 'body is not JSON' });
    expect(json({ location: { coords: { latitude: 1, longitude: 2 } } })).toEqual({
      ok: false,
      reason: 'missing device_id',
    });
    expect(json({ device_id: '1' })).toEqual({ ok: false, reason: 'expected {"device_id", "location": {...}}' });
    expect(json([1, 2])).toEqual({ ok: false, reason: 'expected {"device_id", "location": {...}}' });
    expect(json('null')).toEqual({ ok: false, reason: 'expected {"device_id", "location": {...}}' });
    // A GET with a leading '?', or the whole request URL as Traccar's decoder reads it, is the same query.
    expect(bySignal(query('?id=7&speed=10'))).toEqual({ speed_kph: 18.52 });
    const url = ok(query(`http://traccar.local:5055/?${fixture('osmand-get.txt')}`));
    expect(url).toEqual(ok(query(fixture('osmand-get.txt'))));
  });

  it('skips garbage values with a reason and keeps the rest', () => {
    const result = ok(
      query(
        'id=7&timestamp=1746367331&lat=91&lon=10&speed=fast&batt=150&fuelLevel=140&power=abc&coolantTemp=hot&ignition=maybe' +
          '&obdOdometer=-5&hours=lots&rpm=-3&fuel=x&battery=99&dtcs=&alarm=overspeed,lowBattery&coolant_temp_c=3&_=1&altitude=12',
      ),
    );
    expect(bySignal(result)).toEqual({ dtcs: [], altitude_m: 12 });
    expect(result.events).toEqual([]);
    expect(result.skipped.map((s) => s.reason)).toEqual([
      'location out of range',
      'speed_kph is not a number',
      'device_battery_percent 150 out of range',
      'fuel_percent 140 out of range',
      'battery_voltage is not a number',
      'coolant_temp_c is not a number',
      'ignition maybe is not a boolean',
      'odometer_km -0.005 out of range',
      'engine_hours is not a number',
      'rpm -3 out of range',
      'fuel_liters is not a number',
      'device_battery_voltage 99 out of range',
      'attribute coolant_temp_c would shadow signal coolant_temp_c',
      'attribute "_" has no usable name',
    ]);
    expect(ok(query('id=7&lat=0&lon=0')).skipped).toEqual([{ reason: 'location 0,0 is no fix' }]);
    expect(ok(query('id=7&location=41.85')).skipped).toEqual([{ reason: 'location out of range' }]);
    expect(ok(query('id=7&lat=41.85&lon=-87.65&valid=false&speed=1')).skipped).toEqual([
      { reason: 'location fix not valid' },
    ]);
    expect(bySignal(query('id=7&lat=41.85&lon=-87.65&valid=1'))).toEqual({
      location: { lat: 41.85, lon: -87.65, heading: null },
    });
  });

  it('keeps unknown attributes under a snake_case name, typed number, then boolean, then string', () => {
    expect(
      bySignal(
        query(
          'id=7&totalDistance=1200.5&fuelUsed=3&HDOPValue=0.9&io-2=true&doorOpen=false&driverUniqueId=42A&sat=07&note=0x%5D',
        ),
      ),
    ).toEqual({
      total_distance: 1200.5,
      fuel_used: 3,
      hdop_value: 0.9,
      io_2: true,
      door_open: false,
      driver_unique_id: '42A',
      sat: 7,
      note: '0x]',
    });
    expect(['obdOdometer', 'fuelLevel', 'HDOPValue', 'io-1', 'x', 'ABC'].map(snakeCase)).toEqual([
      'obd_odometer',
      'fuel_level',
      'hdop_value',
      'io_1',
      'x',
      'abc',
    ]);
  });

  it('reads a JSON batch of locations and types string extras like query values', () => {
    const result = ok(
      json({
        device_id: 'phone-1',
        location: [
          {
            timestamp: '2026-05-04T14:00:00Z',
            coords: { latitude: 41.8, longitude: -87.6, speed: 0, heading: 10 },
            event: 'motionchange',
            extras: {
              power: '12.6',
              ignition: 'false',
              obdOdometer: 184000000,
              custom_flag: 'true',
              alarm: 'hardBraking',
            },
          },
          'garbage',
          { timestamp: 'soon', coords: { latitude: 41.81, longitude: -87.6 }, odometer: -4 },
        ],
      }),
    );
    const first = result.samples.filter((s) => s.recordedAt.toISOString() === '2026-05-04T14:00:00.000Z');
    expect(Object.fromEntries(first.map((s) => [s.signal, s.value]))).toEqual({
      location: { lat: 41.8, lon: -87.6, heading: 10 },
      speed_kph: 0,
      app_event: 'motionchange',
      battery_voltage: 12.6,
      engine_state: 'off',
      odometer_km: 184000,
      custom_flag: true,
    });
    expect(result.samples).toHaveLength(first.length);
    expect(result.events).toEqual([
      { providerVehicleId: 'phone-1', kind: 'hard_brake', recordedAt: new Date('2026-05-04T14:00:00Z'), g: null },
    ]);
    expect(result.skipped.map((s) => s.reason)).toEqual([
      'location is not an object',
      'location has no valid time',
      'app_odometer_m has no valid time',
    ]);
  });

  it('verifies the device token the ingest URL carries (handed over as pathToken)', () => {
    const token = 'd3v1ce-t0ken';
    expect(traccar.push!.verify(push(token), token, receivedAt)).toEqual({ ok: true });
    expect(traccar.push!.verify(push(`${token}x`), token, receivedAt)).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
    expect(traccar.push!.verify(push(token.toUpperCase()), token, receivedAt)).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
    expect(traccar.push!.verify(push(token), '', receivedAt)).toEqual({ ok: false, reason: 'bad_signature' });
    expect(traccar.push!.verify(push(null), token, receivedAt)).toEqual({ ok: false, reason: 'missing_signature' });
    expect(traccar.push!.verify(push(''), token, receivedAt)).toEqual({
      ok: false,
      reason: 'missing_signature',
    });
    // The device id is identity, not authentication.
    expect(traccar.push!.verify(push(null, `id=${token}&token=${token}`), token, receivedAt)).toEqual({
      ok: false,
      reason: 'missing_signature',
    });
  });

  it('refuses at the door what can never be stored against a device; keeps no replay key (a repeated fix is a new fix)', () => {
    const rules = traccar.push!;
    expect(rules.tokenInPath).toBe(true);
    expect(rules.replayKey).toBeUndefined();
    expect(rules.bodyProblem('id=358240051111110&lat=1', 'application/x-www-form-urlencoded')).toBeNull();
    expect(rules.bodyProblem('deviceid=7&lat=1', null)).toBeNull();
    expect(rules.bodyProblem('lat=1&lon=2', 'application/x-www-form-urlencoded')).toBe('id (or deviceid) is required');
    expect(rules.bodyProblem('{"device_id":"7","location":{}}', 'application/json')).toBeNull();
    expect(rules.bodyProblem('  {"location":{}}', null)).toBe('device_id is required');
    expect(rules.bodyProblem('{"device_id":', 'application/json')).toBe('body is not valid JSON');
    // A form content type wins over a first character that looks like JSON.
    expect(rules.bodyProblem('{x}=1&id=7', 'application/x-www-form-urlencoded')).toBeNull();
  });

  it('converts attribute names in one pass: hostile names of 200,000+ characters finish and come out right', () => {
    // The regular expressions this replaced backtrack quadratically on a run of capitals that no
    // lower-case letter ends (20,000 took 0.6 s, so this would take about a minute).
    const capitals = 'A'.repeat(200_000);
    expect(snakeCase(capitals)).toBe('a'.repeat(200_000));
    expect(snakeCase(`${capitals}1-${capitals}`)).toBe(`${'a'.repeat(200_000)}1_${'a'.repeat(200_000)}`);
    expect(snakeCase(`${capitals}b`)).toBe(`${'a'.repeat(199_999)}_ab`);
    expect(snakeCase(`${'_'.repeat(200_000)}x${'_'.repeat(200_000)}`)).toBe('x');
    expect(snakeCase(`x${'-'.repeat(400_000)}Y`)).toBe('x_y');
    expect(snakeCase('aB'.repeat(200_000))).toBe(`a${'_ba'.repeat(199_999)}_b`);
  });

  it('is a push-only provider', () => {
    expect(traccar.id).toBe('traccar');
    expect(traccar.refresh).toBe('unsupported');
  });
});
