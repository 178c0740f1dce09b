/**
 * Traccar devices speaking the OsmAnd protocol (docs/providers/traccar.md): phones and trackers
 * push one position per request, as a GET query string, a form-encoded POST with the same keys,
 * or the JSON body of the OsmAnd/Traccar Client apps (`{device_id, location: {...}}`).
 *
 * Query / form keys (`OsmAndProtocolDecoder`):
 *   id | deviceid (required), timestamp (unix s, unix ms, ISO, or `yyyy-MM-dd HH:mm:ss` read as
 *   UTC), lat + lon | location=lat,lon, speed (KNOTS), bearing | heading, altitude, accuracy,
 *   hdop, valid, batt (device battery %); every other key is an attribute typed number, then
 *   boolean, then string, e.g. `&ignition=true&obdOdometer=184023117&fuelLevel=62`.
 *
 * Attributes with a meaning (`model/Position.java`) map to the vocabulary, the others are kept as
 * unknown signals under a snake_case version of their name. `odometer` is GPS-derived, so it is
 * `gps_odometer_km`; only `obdOdometer` is the vehicle's `odometer_km` (traccar/traccar#5730).
 *
 * Devices cannot sign. The connection's ingest URL carries its device token as a path segment
 * (`/ingest/v1/traccar/:connectionId/:token`, docs/ingestion.md); the HTTP layer hands it over as
 * `pathToken` and `push.verify` compares it with the connection's token.
 */
import { createHash } from 'node:crypto';
import { providerEventKinds, signalNames, type ProviderEvent, type ProviderEventKind } from '../src/domain/sample.js';
import { hexEquals } from './signing.js';
import type { NormalizeResult, ProviderAdapter, PushRequest, RawPayload, VerifyResult } from './types.js';
import { SampleCollector, finiteNumber, isObject, parseJson, parseTime } from './values.js';

const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/**
 * The device token from the ingest URL against the connection's token. Both are hashed first so
 * the constant-time comparison sees equal lengths.
 */
export function verifyTraccarToken(request: PushRequest, secret: string): VerifyResult {
  const given = request.pathToken;
  if (given === null || given === '') return { ok: false, reason: 'missing_signature' };
  if (!secret) return { ok: false, reason: 'bad_signature' };
  return hexEquals(sha256Hex(given), sha256Hex(secret)) ? { ok: true } : { ok: false, reason: 'bad_signature' };
}

/** Traccar `alarm` values that are provider events; other alarms (overspeed, lowBattery, tow…) are ignored. */
const alarmKinds: Record<string, ProviderEventKind> = {
  hardBraking: 'hard_brake',
  hardAcceleration: 'hard_accel',
  hardCornering: 'hard_corner',
  accident: 'impact',
};

/** Bounds of the unknown-name signals this adapter produces itself, checked like the vocabulary's. */
const ownRanges: Record<string, [number, number]> = {
  device_battery_percent: [0, 100],
  device_battery_voltage: [0, 60],
  fuel_liters: [0, 10_000],
  rpm: [0, 20_000],
  app_odometer_m: [0, 1e10],
  altitude_m: [-1_000, 100_000],
  accuracy_m: [0, 1e7],
  obd_speed_kph: [0, 400],
};
const ownNames = new Set([...Object.keys(ownRanges), 'device_battery_charging', 'is_moving', 'app_event']);
const vocabulary = new Set<string>(signalNames);

type CharKind = 'lower' | 'digit' | 'upper' | 'other';

function charKind(char: string | undefined): CharKind {
  if (char === undefined) return 'other';
  if (char >= 'a' && char <= 'z') return 'lower';
  if (char >= '0' && char <= '9') return 'digit';
  return char >= 'A' && char <= 'Z' ? 'upper' : 'other';
}

/**
 * `fuelLevel` → `fuel_level`, `obdOdometer` → `obd_odometer`, `HDOPValue` → `hdop_value`, `io-1` → `io_1`.
 * One pass over the name: a word starts at a capital after a lower-case letter or digit, and at
 * the last capital of a run followed by a lower-case letter ("HDOPValue"); any other character
 * separates words. (Regular expressions for this backtrack quadratically on long capital runs.)
 */
export function snakeCase(name: string): string {
  let out = '';
  let separate = false;
  for (let i = 0; i < name.length; i++) {
    const kind = charKind(name[i]);
    if (kind === 'other') {
      separate = out !== '';
      continue;
    }
    if (kind === 'upper' && out !== '' && !separate) {
      const previous = charKind(name[i - 1]);
      separate =
        previous === 'lower' || previous === 'digit' || (previous === 'upper' && charKind(name[i + 1]) === 'lower');
    }
    if (separate) out += '_';
    separate = false;
    out += name[i]!.toLowerCase();
  }
  return out;
}

/** A query/form value typed as Traccar types attributes: number, then boolean, then string. */
function typed(value: string): number | boolean | string {
  const n = finiteNumber(value);
  if (n !== null) return n;
  if (value === 'true') return true;
  if (value === 'false') return false;
  return value;
}

/** OsmAnd timestamps; an ISO time without offset and `yyyy-MM-dd HH:mm:ss` are read as UTC (not the host's zone). */
export function parseTraccarTime(value: unknown): Date | null {
  if (typeof value === 'string') {
    const text = value.trim();
    const plain = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?$/.exec(text);
    if (plain) {
      const [y, mo, d, h, mi, sec] = plain.slice(1, 7).map((part) => Number(part ?? 0)) as [
        number,
        number,
        number,
        number,
        number,
        number,
      ];
      const date = new Date(Date.UTC(y, mo - 1, d, h, mi, sec, Math.round(Number(plain[7] ?? 0) * 1000)));
      // Date.UTC rolls 2026-02-31 over into March; a calendar-invalid text is no time.
      const valid = h < 24 && mi < 60 && sec < 60 && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
      return valid && Number.isFinite(date.getTime()) ? date : null;
    }
    // Only numbers and ISO 8601 with a date part; `new Date` would also accept "May 4" in local time.
    if (!/^\d+(\.\d+)?$/.test(text) && !/^\d{4}-\d{2}-\d{2}T/.test(text)) return null;
    return parseTime(text);
  }
  return typeof value === 'number' ? parseTime(value) : null;
}

/** The converted number when the value is one; otherwise the raw value, so the range check records why it was skipped. */
function convert(value: unknown, unit: (n: number) => number): unknown {
  const n = finiteNumber(value);
  return n === null ? value : unit(n);
}

/** One position as decoded from either form, before it becomes samples. */
interface Fix {
  vehicle: string;
  /** null: the payload carried a time we could not read (its samples are skipped). */
  recordedAt: Date | null;
  lat: unknown;
  lon: unknown;
  heading: unknown;
  /** false when the device said its fix is not valid (`valid=false`). */
  valid: boolean;
  /** speed already converted to km/h, or the raw value when it is not a number. */
  speedKph: unknown;
  /** Standard keys that are not vocabulary signals, already in their unit (e.g. device_battery_percent). */
  extra: Array<[string, unknown]>;
  /** Attributes in arrival order: query keys not standard, JSON `extras`. */
  attributes: Array<[string, unknown]>;
}

function emptyFix(vehicle: string, recordedAt: Date | null): Fix {
  return {
    vehicle,
    recordedAt,
    lat: undefined,
    lon: undefined,
    heading: undefined,
    valid: true,
    speedKph: undefined,
    extra: [],
    attributes: [],
  };
}

function addNumber(collector: SampleCollector, fix: Fix, signal: string, value: unknown): void {
  if (value === undefined) return;
  const range = ownRanges[signal];
  // Without a time the collector records that reason first, as for every other signal.
  if (range && value !== null && fix.recordedAt) {
    const n = finiteNumber(value);
    if (n === null) return collector.skip(`${signal} is not a number`);
    if (n < range[0] || n > range[1]) return collector.skip(`${signal} ${n} out of range`);
    return collector.add(fix.vehicle, signal, fix.recordedAt, n);
  }
  collector.add(fix.vehicle, signal, fix.recordedAt, value);
}

/** Ignition as engine_state; anything but true/false/1/0 is not an ignition state. */
function ignitionState(value: unknown): 'on' | 'off' | null {
  if (value === true || value === 1 || value === 'true') return 'on';
  if (value === false || value === 0 || value === 'false') return 'off';
  return null;
}

/** "P0420 P0171", "P0420,P0171" or a JSON array; an empty text is an empty list (codes cleared). */
function dtcList(value: unknown): unknown {
  if (typeof value === 'string') return value.split(/[\s,]+/).filter(Boolean);
  if (typeof value === 'number') return [String(value)];
  return value;
}

/** Turns one decoded fix into samples and events. */
function emit(fix: Fix, collector: SampleCollector, events: ProviderEvent[]): void {
  const { vehicle, recordedAt } = fix;
  if (fix.lat !== undefined || fix.lon !== undefined) {
    if (!fix.valid) collector.skip('location fix not valid');
    else {
      const heading = finiteNumber(fix.heading);
      // iOS and Android report -1 for an unknown course.
      collector.add(vehicle, 'location', recordedAt, {
        lat: fix.lat,
        lon: fix.lon,
        heading: heading !== null && heading >= 0 ? heading : null,
      });
    }
  }
  const hasSpeed = fix.speedKph !== undefined;
  collector.add(vehicle, 'speed_kph', recordedAt, fix.speedKph);
  for (const [signal, value] of fix.extra) addNumber(collector, fix, signal, value);

  for (const [name, value] of fix.attributes) {
    switch (name) {
      case 'odometer': // metres, GPS-derived (Traccar DistanceHandler), not the vehicle's meter
        collector.add(
          vehicle,
          'gps_odometer_km',
          recordedAt,
          convert(value, (m) => m / 1000),
        );
        break;
      case 'obdOdometer': // metres, read from the vehicle (OBD/CAN)
        collector.add(
          vehicle,
          'odometer_km',
          recordedAt,
          convert(value, (m) => m / 1000),
        );
        break;
      case 'fuelLevel': // percent
        collector.add(vehicle, 'fuel_percent', recordedAt, value);
        break;
      case 'fuel': // litres (renamed from fuelLevel in 2025, traccar#5674)
        addNumber(collector, fix, 'fuel_liters', value);
        break;
      case 'coolantTemp': // °C
        collector.add(vehicle, 'coolant_temp_c', recordedAt, value);
        break;
      case 'power': // volts, the vehicle supply the tracker is wired to
        collector.add(vehicle, 'battery_voltage', recordedAt, value);
        break;
      case 'battery': // volts, the tracker's own backup battery
        addNumber(collector, fix, 'device_battery_voltage', value);
        break;
      case 'ignition': {
        const state = ignitionState(value);
        if (state) collector.add(vehicle, 'engine_state', recordedAt, state);
        else collector.skip(`ignition ${String(value)} is not a boolean`);
        break;
      }
      case 'hours': // milliseconds of engine running
        collector.add(
          vehicle,
          'engine_hours',
          recordedAt,
          convert(value, (ms) => ms / 3_600_000),
        );
        break;
      case 'obdSpeed': // km/h from the vehicle; GPS `speed` wins when both are sent
        if (hasSpeed) addNumber(collector, fix, 'obd_speed_kph', value);
        else collector.add(vehicle, 'speed_kph', recordedAt, value);
        break;
      case 'rpm':
        addNumber(collector, fix, 'rpm', value);
        break;
      case 'dtcs': // "P0420 P0171" or "P0420,P0171"
        collector.add(vehicle, 'dtcs', recordedAt, dtcList(value));
        break;
      case 'alarm': // comma-joined, e.g. "hardBraking,overspeed"
        for (const alarm of String(value)
          .split(',')
          .map((a) => a.trim())) {
          const kind = alarmKinds[alarm];
          if (!kind) continue;
          if (!recordedAt) collector.skip(`event ${kind} untimed`);
          else events.push({ providerVehicleId: vehicle, kind, recordedAt, g: null });
        }
        break;
      default: {
        const signal = snakeCase(name);
        if (!signal) collector.skip(`attribute ${JSON.stringify(name)} has no usable name`);
        // A custom key must not write a vocabulary signal in an unknown unit (or one of ours).
        else if (
          vocabulary.has(signal) ||
          ownNames.has(signal) ||
          (providerEventKinds as readonly string[]).includes(signal)
        ) {
          collector.skip(`attribute ${name} would shadow signal ${signal}`);
        } else collector.add(vehicle, signal, recordedAt, value);
      }
    }
  }
}

/** The OsmAnd query / form keys, applied in order like the decoder (a repeated key: the last wins). */
function fromQuery(body: string, receivedAt: Date): { ok: true; fix: Fix } | { ok: false; reason: string } {
  // The query string, also when a whole request URL or its path was stored ("/?id=…", "http://host:5055/?id=…").
  const text = body.trim().replace(/^[^=&]*\?/, '');
  const params = new URLSearchParams(text);
  const entries = [...params.entries()];
  if (entries.length === 0) return { ok: false, reason: 'body is not an OsmAnd query' };
  let vehicle = '';
  for (const [key, value] of entries) if ((key === 'id' || key === 'deviceid') && value.trim()) vehicle = value.trim();
  if (!vehicle) return { ok: false, reason: 'missing device id (id or deviceid)' };

  // Traccar uses the time of arrival when the device sends none.
  const stamp = params.has('timestamp') ? params.getAll('timestamp').at(-1)! : null;
  const fix = emptyFix(vehicle, stamp === null ? receivedAt : parseTraccarTime(stamp));
  for (const [key, value] of entries) {
    switch (key) {
      case 'id':
      case 'deviceid':
      case 'timestamp':
        break;
      case 'lat':
        fix.lat = value;
        break;
      case 'lon':
        fix.lon = value;
        break;
      case 'location': {
        const [lat, lon] = value.split(',');
        fix.lat = lat ?? '';
        fix.lon = lon ?? '';
        break;
      }
      case 'valid':
        fix.valid = value === 'true' || value === '1';
        break;
      case 'speed': // knots (OsmAnd default, osmand.speed unset)
        fix.speedKph = convert(value, (knots) => knots * 1.852);
        break;
      case 'bearing':
      case 'heading':
        fix.heading = value;
        break;
      case 'altitude': // metres
        fix.extra.push(['altitude_m', value]);
        break;
      case 'accuracy': // metres
        fix.extra.push(['accuracy_m', value]);
        break;
      case 'batt': // percent, the phone's / tracker's own battery
        fix.extra.push(['device_battery_percent', value]);
        break;
      default:
        fix.attributes.push([key, typed(value)]);
    }
  }
  return { ok: true, fix };
}

const jsonShape = 'expected {"device_id", "location": {...}}';

/** The JSON form (OsmAnd / Traccar Client, transistorsoft background-geolocation); `location` may be one object or an array. */
function fromJson(
  value: unknown,
  receivedAt: Date,
): { ok: true; fixes: Fix[]; skipped: string[] } | { ok: false; reason: string } {
  if (!isObject(value)) return { ok: false, reason: jsonShape };
  const id = value.device_id;
  const vehicle = typeof id === 'string' ? id.trim() : typeof id === 'number' && Number.isFinite(id) ? String(id) : '';
  if (!vehicle) return { ok: false, reason: 'missing device_id' };
  const locations = Array.isArray(value.location) ? value.location : isObject(value.location) ? [value.location] : null;
  if (!locations) return { ok: false, reason: jsonShape };
  const fixes: Fix[] = [];
  const skipped: string[] = [];
  for (const location of locations) {
    if (!isObject(location)) {
      skipped.push('location is not an object');
      continue;
    }
    const fix = emptyFix(vehicle, location.timestamp === undefined ? receivedAt : parseTraccarTime(location.timestamp));
    const coords = isObject(location.coords) ? location.coords : {};
    fix.lat = coords.latitude;
    fix.lon = coords.longitude;
    fix.heading = coords.heading;
    // metres per second
    if (coords.speed !== undefined) fix.speedKph = convert(coords.speed, (mps) => mps * 3.6);
    fix.extra.push(['altitude_m', coords.altitude], ['accuracy_m', coords.accuracy]);
    // The app's own odometer in metres, since the app started counting: never the vehicle's meter.
    fix.extra.push(['app_odometer_m', location.odometer]);
    if (typeof location.is_moving === 'boolean') fix.extra.push(['is_moving', location.is_moving]);
    if (typeof location.event === 'string' && location.event) fix.extra.push(['app_event', location.event]);
    if (isObject(location.battery)) {
      // level is a 0..1 fraction
      fix.extra.push(['device_battery_percent', convert(location.battery.level, (fraction) => fraction * 100)]);
      if (typeof location.battery.is_charging === 'boolean')
        fix.extra.push(['device_battery_charging', location.battery.is_charging]);
    }
    if (location.alarm !== undefined) fix.attributes.push(['alarm', location.alarm]);
    if (isObject(location.extras)) {
      for (const [key, extra] of Object.entries(location.extras))
        fix.attributes.push([key, typeof extra === 'string' ? typed(extra) : extra]);
    }
    fixes.push(fix);
  }
  return { ok: true, fixes, skipped };
}

/** JSON is told by its content type, else by its first character unless it came as a form. */
function isJsonBody(body: string, contentType: string | null): boolean {
  const type = (contentType ?? '').toLowerCase();
  const first = body.trimStart()[0];
  return type.includes('json') || ((first === '{' || first === '[') && !type.includes('x-www-form-urlencoded'));
}

export function normalizeTraccar(raw: RawPayload, receivedAt: Date): NormalizeResult {
  const body = typeof raw.body === 'string' ? raw.body : '';
  const collector = new SampleCollector();
  const events: ProviderEvent[] = [];
  if (isJsonBody(body, raw.contentType)) {
    const parsed = parseJson(body);
    if (!parsed.ok) return { ok: false, reason: 'body is not JSON' };
    const decoded = fromJson(parsed.value, receivedAt);
    if (!decoded.ok) return decoded;
    for (const reason of decoded.skipped) collector.skip(reason);
    for (const fix of decoded.fixes) emit(fix, collector, events);
  } else {
    const decoded = fromQuery(body, receivedAt);
    if (!decoded.ok) return decoded;
    emit(decoded.fix, collector, events);
  }
  return { ok: true, samples: collector.samples, events, skipped: collector.skipped };
}

/** A push that can never be stored against a device: JSON without device_id, a form without id. */
export function traccarBodyProblem(body: string, contentType: string | null): string | null {
  if (isJsonBody(body, contentType)) {
    const parsed = parseJson(body);
    if (!parsed.ok) return 'body is not valid JSON';
    return isObject(parsed.value) && 'device_id' in parsed.value ? null : 'device_id is required';
  }
  const params = new URLSearchParams(body);
  return params.get('id') || params.get('deviceid') ? null : 'id (or deviceid) is required';
}

export const traccar: ProviderAdapter = {
  id: 'traccar',
  normalize: (raw, receivedAt) => normalizeTraccar(raw, receivedAt),
  refresh: 'unsupported',
  // No replay key: a device that sends no timestamp repeats the same query for a new fix.
  push: {
    verify: (request, secret) => verifyTraccarToken(request, secret),
    bodyProblem: traccarBodyProblem,
    tokenInPath: true,
  },
  connection: { problems: () => [], generatedSecret: { when: 'always', prefix: '' } },
};
