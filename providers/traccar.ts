/**
 * Traccar, two ways (docs/providers/traccar.md):
 * - devices speaking the OsmAnd protocol: phones and trackers push one position per request, as a
 *   GET query string, a form-encoded POST with the same keys, or the JSON body of the
 *   OsmAnd/Traccar Client apps (`{device_id, location: {...}}`);
 * - a Traccar server's forwarding, so every protocol it decodes (Teltonika, Queclink, Concox…)
 *   reaches us: `{position, device}` (`forward.type=json`) and `{event, position, device}`
 *   (`event.forward.url`), one POST each. `device.uniqueId` is the vehicle; `fixTime` the reading
 *   time; `speed` knots; the attributes are the same as a device's.
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
 * Neither devices nor a Traccar server sign. The connection's ingest URL carries its device token
 * as a path segment (`/ingest/v1/traccar/:connectionId/:token`, docs/ingestion.md); the HTTP layer hands
 * it over as `pathToken` and `push.verify` compares it with the connection's token.
 */
import { createHash } from 'node:crypto';
import { providerEventKinds, signalNames, type ProviderEvent, type ProviderEventKind } from '../src/domain/sample.js';
import { header, hexEquals } from './signing.js';
import type { NormalizeResult, ProviderAdapter, PushRequest, RawPayload, VerifyResult } from './types.js';
import { SampleCollector, finiteNumber, isObject, parseJson, parseTime, scaled } from './values.js';

const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/**
 * The device token from the ingest URL, else from `Authorization: Bearer <token>` (what a Traccar
 * server sends on the URL without the token when `forward.header` sets it), against the
 * connection's token. Both are hashed first so the constant-time comparison sees equal lengths.
 */
export function verifyTraccarToken(request: PushRequest, secret: string): VerifyResult {
  const bearer = /^Bearer +(\S+) *$/i.exec(header(request.headers, 'authorization') ?? '');
  const given = request.pathToken ?? bearer?.[1] ?? null;
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

/**
 * OsmAnd timestamps and the dates a Traccar server writes. An ISO time is read strictly (a
 * calendar-invalid 2026-02-31 is no time, where `new Date` would roll it into March), with the
 * offset as Jackson writes it, `+00:00`, or as Traccar before 2021 wrote it, `+0000`; without an
 * offset it is UTC, as is `yyyy-MM-dd HH:mm:ss` (never the host's zone).
 */
export function parseTraccarTime(value: unknown): Date | null {
  if (typeof value === 'string') {
    const text = value.trim();
    const iso = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/.exec(text);
    if (iso) {
      const [y, mo, d, h, mi, sec] = iso.slice(1, 7).map((part) => Number(part ?? 0)) as [
        number,
        number,
        number,
        number,
        number,
        number,
      ];
      const date = new Date(Date.UTC(y, mo - 1, d, h, mi, sec, Math.round(Number(iso[7] ?? 0) * 1000)));
      // Date.UTC rolls 2026-02-31 over into March; a calendar-invalid text is no time.
      const valid = h < 24 && mi < 60 && sec < 60 && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
      const offsetMinutes = offsetOf(iso[8]);
      if (!valid || offsetMinutes === null || !Number.isFinite(date.getTime())) return null;
      return new Date(date.getTime() - offsetMinutes * 60_000);
    }
    // Only numbers and ISO 8601 with a date part; `new Date` would also accept "May 4" in local time.
    if (!/^\d+(\.\d+)?$/.test(text) && !/^\d{4}-\d{2}-\d{2}T/.test(text)) return null;
    return parseTime(text);
  }
  return typeof value === 'number' ? parseTime(value) : null;
}

/** Minutes east of UTC of `Z`, `+02:00` or `-0300` (none: UTC); null past ±18 hours, as java.time allows. */
function offsetOf(text: string | undefined): number | null {
  if (text === undefined || text === 'Z') return 0;
  const hours = Number(text.slice(1, 3));
  const minutes = Number(text.slice(-2));
  if (minutes >= 60 || hours * 60 + minutes > 18 * 60) return null;
  return (text[0] === '-' ? -1 : 1) * (hours * 60 + minutes);
}

/** The converted number when the value is one; otherwise the raw value, so the range check records why it was skipped. */
function convert(value: unknown, unit: (n: number) => number): unknown {
  const n = finiteNumber(value);
  return n === null ? value : unit(n);
}

/** One position as decoded from any form, before it becomes samples. */
interface Fix {
  vehicle: string;
  /**
   * When the fix was taken: the time of location, speed and the standard keys. null: the payload
   * carried a time we could not read (its samples are skipped).
   */
  recordedAt: Date | null;
  /**
   * When the attributes were read. The fix time, except for a forwarded position whose device time
   * is later: an outdated one (a status message) repeats the last fix with new attributes.
   */
  readAt: Date | null;
  lat: unknown;
  lon: unknown;
  heading: unknown;
  /** The server's reverse geocoding of a forwarded position (`position.address`). */
  address: unknown;
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
    readAt: recordedAt,
    lat: undefined,
    lon: undefined,
    heading: undefined,
    address: undefined,
    valid: true,
    speedKph: undefined,
    extra: [],
    attributes: [],
  };
}

function addNumber(collector: SampleCollector, vehicle: string, at: Date | null, signal: string, value: unknown): void {
  if (value === undefined) return;
  const range = ownRanges[signal];
  // Without a time the collector records that reason first, as for every other signal.
  if (range && value !== null && at) {
    const n = finiteNumber(value);
    if (n === null) return collector.skip(`${signal} is not a number`);
    if (n < range[0] || n > range[1]) return collector.skip(`${signal} ${n} out of range`);
    return collector.add(vehicle, signal, at, n);
  }
  collector.add(vehicle, signal, at, value);
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
  const { vehicle, recordedAt, readAt } = fix;
  if (fix.lat !== undefined || fix.lon !== undefined) {
    if (!fix.valid) collector.skip('location fix not valid');
    else {
      const heading = finiteNumber(fix.heading);
      // iOS and Android report -1 for an unknown course.
      collector.add(vehicle, 'location', recordedAt, {
        lat: fix.lat,
        lon: fix.lon,
        heading: heading !== null && heading >= 0 ? heading : null,
        address: fix.address,
      });
    }
  }
  const hasSpeed = fix.speedKph !== undefined;
  collector.add(vehicle, 'speed_kph', recordedAt, fix.speedKph);
  for (const [signal, value] of fix.extra) addNumber(collector, vehicle, recordedAt, signal, value);

  for (const [name, value] of fix.attributes) {
    switch (name) {
      case 'odometer': // metres, GPS-derived (Traccar DistanceHandler), not the vehicle's meter
        collector.add(
          vehicle,
          'gps_odometer_km',
          readAt,
          convert(value, (m) => m / 1000),
        );
        break;
      case 'obdOdometer': // metres, read from the vehicle (OBD/CAN)
        collector.add(
          vehicle,
          'odometer_km',
          readAt,
          convert(value, (m) => m / 1000),
        );
        break;
      case 'fuelLevel': // percent
        collector.add(vehicle, 'fuel_percent', readAt, value);
        break;
      case 'fuel': // litres (renamed from fuelLevel in 2025, traccar#5674)
        addNumber(collector, vehicle, readAt, 'fuel_liters', value);
        break;
      case 'coolantTemp': // °C
        collector.add(vehicle, 'coolant_temp_c', readAt, value);
        break;
      case 'power': // volts, the vehicle supply the tracker is wired to
        collector.add(vehicle, 'battery_voltage', readAt, value);
        break;
      case 'battery': // volts, the tracker's own backup battery
        addNumber(collector, vehicle, readAt, 'device_battery_voltage', value);
        break;
      case 'batteryLevel': // percent: what Traccar's OsmAnd decoder makes of `batt`
        addNumber(collector, vehicle, readAt, 'device_battery_percent', value);
        break;
      case 'ignition': {
        const state = ignitionState(value);
        if (state) collector.add(vehicle, 'engine_state', readAt, state);
        else collector.skip(`ignition ${String(value)} is not a boolean`);
        break;
      }
      case 'hours': // milliseconds of engine running
        collector.add(
          vehicle,
          'engine_hours',
          readAt,
          convert(value, (ms) => ms / 3_600_000),
        );
        break;
      case 'obdSpeed': // km/h from the vehicle; GPS `speed` wins when both are sent
        if (hasSpeed) addNumber(collector, vehicle, readAt, 'obd_speed_kph', value);
        else collector.add(vehicle, 'speed_kph', readAt, value);
        break;
      case 'rpm':
        addNumber(collector, vehicle, readAt, 'rpm', value);
        break;
      case 'dtcs': // "P0420 P0171" or "P0420,P0171"
        collector.add(vehicle, 'dtcs', readAt, dtcList(value));
        break;
      case 'alarm': // comma-joined, e.g. "hardBraking,overspeed"
        for (const alarm of String(value)
          .split(',')
          .map((a) => a.trim())) {
          const kind = alarmKinds[alarm];
          if (!kind) continue;
          if (!readAt) collector.skip(`event ${kind} untimed`);
          else events.push({ providerVehicleId: vehicle, kind, recordedAt: readAt, g: null });
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
        } else collector.add(vehicle, signal, readAt, value);
      }
    }
  }
}

type Refused = { ok: false; reason: string };

/** The OsmAnd query / form keys, applied in order like the decoder (a repeated key: the last wins). */
function fromQuery(body: string, receivedAt: Date): { ok: true; fix: Fix } | Refused {
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
function fromJson(value: unknown, receivedAt: Date): { ok: true; fixes: Fix[]; skipped: string[] } | Refused {
  if (!isObject(value)) return { ok: false, reason: jsonShape };
  const vehicle = idText(value.device_id);
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

/** A device identifier sent as text or as a number. */
function idText(id: unknown): string {
  return typeof id === 'string' ? id.trim() : typeof id === 'number' && Number.isFinite(id) ? String(id) : '';
}

/**
 * A Traccar server's forwarding, told from the OsmAnd JSON by its keys: `PositionForwarderJson`
 * posts `{position, device}`, `EventForwarderJson` `{event, position, device}` (no `position` for
 * events without one, such as deviceOnline). The OsmAnd JSON names `device_id`, and may carry a
 * `device` of its own (background-geolocation's phone model).
 */
function isForwarded(value: Record<string, unknown>): boolean {
  return !('device_id' in value) && ('position' in value || 'event' in value);
}

/** A date of a forwarded body: absent or null is none; one that does not read refuses the whole body. */
function forwardedTime(value: unknown, field: string): { ok: true; at: Date | null } | Refused {
  if (value === undefined || value === null) return { ok: true, at: null };
  const at = parseTraccarTime(value);
  return at ? { ok: true, at } : { ok: false, reason: `${field} is not a date` };
}

/** A forwarded `position` (`model/Position.java`) as a fix. */
function forwardedFix(vehicle: string, position: Record<string, unknown>): { ok: true; fix: Fix } | Refused {
  const fixTime = forwardedTime(position.fixTime, 'position.fixTime');
  if (!fixTime.ok) return fixTime;
  if (!fixTime.at) return { ok: false, reason: 'position.fixTime is required' };
  const deviceTime = forwardedTime(position.deviceTime, 'position.deviceTime');
  if (!deviceTime.ok) return deviceTime;
  const fix = emptyFix(vehicle, fixTime.at);
  // An outdated position (a status message, OutdatedHandler) carries the last fix and its time,
  // with the attributes of the message, read at its device time.
  if (deviceTime.at && deviceTime.at > fixTime.at) fix.readAt = deviceTime.at;
  fix.valid = position.valid !== false;
  fix.lat = position.latitude;
  fix.lon = position.longitude;
  fix.heading = position.course;
  fix.address = position.address;
  // Speed, altitude and accuracy come from the fix too: an invalid one gives none of them. Its
  // attributes (ignition, power, CAN values, alarms) still hold, as for Traccar, which stores the
  // position and runs its alarms but leaves it out of motion (`event.motion.processInvalidPositions`).
  if (fix.valid) {
    // Rounded: Traccar stores decoders' km/h as knots, and ×1.852 would bring float noise back.
    fix.speedKph = scaled(position.speed, 1.852);
    // The fields are primitive doubles in Traccar: 0 is what a device that reports none gets.
    if (position.altitude !== 0) fix.extra.push(['altitude_m', position.altitude]);
    if (position.accuracy !== 0) fix.extra.push(['accuracy_m', position.accuracy]);
  }
  if (isObject(position.attributes)) fix.attributes.push(...Object.entries(position.attributes));
  return { ok: true, fix };
}

/**
 * A forwarded body as one fix, or why it can never be stored (400 at the door): no
 * `device.uniqueId`, or a date that does not read. An event without a position is a fix without
 * coordinates at its `eventTime`.
 */
function fromForwarded(value: Record<string, unknown>): { ok: true; fix: Fix } | Refused {
  const vehicle = isObject(value.device) ? idText(value.device.uniqueId) : '';
  if (!vehicle) return { ok: false, reason: 'device.uniqueId is required' };
  const event = value.event ?? null;
  const position = value.position ?? null;
  if (event !== null && !isObject(event)) return { ok: false, reason: 'event is not an object' };
  if (position !== null && !isObject(position)) return { ok: false, reason: 'position is not an object' };
  if (!event && !position) return { ok: false, reason: 'expected {position, device} or {event, position, device}' };
  const eventTime = forwardedTime(event?.eventTime, 'event.eventTime');
  if (!eventTime.ok) return eventTime;
  const decoded = position
    ? forwardedFix(vehicle, position)
    : { ok: true as const, fix: emptyFix(vehicle, eventTime.at) };
  if (!decoded.ok) return decoded;
  // AlarmEventHandler makes one `alarm` event per alarm of the position, timed by the position:
  // the alarm also arrives on the forwarded position, and both are one provider event.
  if (event?.type === 'alarm' && isObject(event.attributes) && event.attributes.alarm !== undefined)
    decoded.fix.attributes.push(['alarm', event.attributes.alarm]);
  return decoded;
}

/** Every form decoded into fixes: an OsmAnd query or form, the OsmAnd JSON, a Traccar server's forwarding. */
function decode(
  body: string,
  contentType: string | null,
  receivedAt: Date,
): { ok: true; fixes: Fix[]; skipped: string[] } | Refused {
  if (!isJsonBody(body, contentType)) {
    const decoded = fromQuery(body, receivedAt);
    return decoded.ok ? { ok: true, fixes: [decoded.fix], skipped: [] } : decoded;
  }
  const parsed = parseJson(body);
  if (!parsed.ok) return { ok: false, reason: 'body is not JSON' };
  if (isObject(parsed.value) && isForwarded(parsed.value)) {
    const decoded = fromForwarded(parsed.value);
    return decoded.ok ? { ok: true, fixes: [decoded.fix], skipped: [] } : decoded;
  }
  return fromJson(parsed.value, receivedAt);
}

/** One event per vehicle, kind and time: an alarm named twice (on a position and by its event) is one. */
function distinctEvents(events: ProviderEvent[]): ProviderEvent[] {
  const seen = new Set<string>();
  return events.filter((e) => {
    const key = `${e.providerVehicleId}\u0000${e.kind}\u0000${e.recordedAt.getTime()}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** JSON is told by its content type, else by its first character unless it came as a form. */
function isJsonBody(body: string, contentType: string | null): boolean {
  const type = (contentType ?? '').toLowerCase();
  const first = body.trimStart()[0];
  return type.includes('json') || ((first === '{' || first === '[') && !type.includes('x-www-form-urlencoded'));
}

export function normalizeTraccar(raw: RawPayload, receivedAt: Date): NormalizeResult {
  const decoded = decode(typeof raw.body === 'string' ? raw.body : '', raw.contentType, receivedAt);
  if (!decoded.ok) return decoded;
  const collector = new SampleCollector();
  const events: ProviderEvent[] = [];
  for (const reason of decoded.skipped) collector.skip(reason);
  for (const fix of decoded.fixes) emit(fix, collector, events);
  return { ok: true, samples: collector.samples, events: distinctEvents(events), skipped: collector.skipped };
}

/**
 * A push that can never be stored against a device: JSON without device_id, a form without id, a
 * forwarded body without device.uniqueId or with a date that does not read.
 */
export function traccarBodyProblem(body: string, contentType: string | null): string | null {
  if (isJsonBody(body, contentType)) {
    const parsed = parseJson(body);
    if (!parsed.ok) return 'body is not valid JSON';
    if (isObject(parsed.value) && isForwarded(parsed.value)) {
      const decoded = fromForwarded(parsed.value);
      return decoded.ok ? null : decoded.reason;
    }
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
    signatureHeaders: ['authorization'],
  },
  connection: { problems: () => [], generatedSecret: { when: 'always', prefix: '' } },
};
