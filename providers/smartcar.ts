/**
 * Smartcar adapter: docs/providers/smartcar.md.
 *
 * `normalize` accepts:
 *
 * 1. The v4 webhook `VEHICLE_STATE` event:
 *      {"eventId", "eventType": "VEHICLE_STATE", "data": {"vehicle": {"id", ...},
 *       "signals": [{"code", "name", "group", "body", "status": {"value"}, "meta": {"retrievedAt", "oemUpdatedAt"}}]},
 *       "triggers", "meta"}
 *    Reading time = the signal's `meta.oemUpdatedAt` (epoch ms, when the carmaker recorded it),
 *    else `meta.retrievedAt`. A signal with `status.value` ERROR or without `body` is
 *    skipped with a reason. Mapped codes (Smartcar's signal reference; others are ignored):
 *    - `odometer-traveleddistance` `{unit: "kilometers"|"miles", value}` → odometer_km
 *    - `location-preciselocation` `{latitude, longitude, heading}` → location
 *    - `motion-currentspeed` `{unit: "kph"|"mph", value}` → speed_kph
 *    - `internalcombustionengine-fuellevel` `{unit: "percent", value}` → fuel_percent
 *    - `internalcombustionengine-oillife` `{unit: "percent", value}` → oil_life_percent
 *    - `tractionbattery-stateofcharge` `{unit: "percent", value}` → `ev_battery_percent`
 *    - `wheel-tires` `{values: [{row, column, tirePressure}], rowCount, columnCount}` →
 *      tire_pressure_kpa: row 0 is the front axle and the last row the rear, column 0 the left
 *      side and the last column the right. The pressure unit is not in the reference
 *      [UNCONFIRMED]: kPa, or psi when the body says `unit: "psi"`.
 *    - `diagnostics-dtclist` `{values: [{code, timestamp}]}` → dtcs (the full active list)
 *    - `diagnostics-mil` `{status: ALERT|OK}` → check_engine_light
 *    - the other `diagnostics-<system>` `{status: ALERT|OK}` (abs, airbag, transmission, brakefluid,
 *      oilpressure, tirepressure, …) → `system_status_<system>` ALERT|OK, for monitoring
 *    - `lowvoltagebattery-stateofcharge` `{unit: "percent", value}` → `low_voltage_battery_percent`
 *      (the 12 V battery's state of charge in %, NOT its voltage, so never battery_voltage)
 *    - `lowvoltagebattery-status` `{value: GOOD|WARN|BAD}` → `low_voltage_battery_status`
 * 2. `{"eventType": "VERIFY", "data": {"challenge"}}`: ok with nothing in it (the push route answers
 *    it through `push.handshake`). Other event types are ok with one skip reason.
 * 3. The wrapper smartcar.client.ts stores for a v2.0 batch:
 *      {"smartcar_vehicle_id", "unit_system": "metric"|"imperial",
 *       "response": {"responses": [{"path", "code", "body", "headers": {"sc-data-age", "sc-unit-system"}}]}}
 *    Reading time = the entry's `sc-data-age`, else the time the payload was received. The unit
 *    system is the entry's `sc-unit-system`, else the wrapper's, else metric (Smartcar's default).
 *    Non-200 entries are skipped with a reason. Paths: /odometer, /fuel, /battery (the EV traction
 *    battery: `ev_battery_percent`), /tires/pressure, /engine/oil, /location, /diagnostics/dtcs,
 *    /diagnostics/system_status (`{systems: [{systemId: "SYSTEM_ABS", status}]}` →
 *    `system_status_abs`, …).
 *
 * Push signature: `SC-Signature` = hex HMAC-SHA256(application management token, raw body), on
 * every delivery including VERIFY. The raw body is verified, not a re-serialization (the SDK's
 * helper is wrong). Replays: Smartcar retries a delivery with the same `eventId`, so a repeated
 * eventId within the replay window is a duplicate; a delivery whose signed `meta.deliveredAt` is
 * older than that window (or more than 5 minutes ahead) is refused as stale, so an old capture can
 * never be replayed once the window has forgotten it.
 */
import { kmPerMile } from '../src/domain/units.js';
import { requiredKeys } from './connection.js';
import { bodyReplayKey, jsonBodyProblem, replayWindowMs } from './push.js';
import { header, hexEquals, hmacHex } from './signing.js';
import type {
  HandshakeResult,
  NormalizeResult,
  ProviderAdapter,
  PushRequest,
  RawPayload,
  VerifyResult,
} from './types.js';
import { SampleCollector, finiteNumber, isObject, parseJson, parseTime, scaled } from './values.js';

/** Pound-force per square inch in kPa. */
const kpaPerPsi = 6.894757;
/** How far ahead of our clock a delivery's `meta.deliveredAt` may be. */
const deliveredAtSkewMs = 5 * 60_000;

const signatureHeader = 'sc-signature';

export function verifySmartcarSignature(
  request: PushRequest,
  applicationManagementToken: string,
  now: Date,
): VerifyResult {
  const given = header(request.headers, signatureHeader);
  if (!given) return { ok: false, reason: 'missing_signature' };
  const signature = given.trim();
  // An empty token would make the HMAC forgeable by anyone: never accept it.
  if (!applicationManagementToken || !/^[0-9a-fA-F]{64}$/.test(signature))
    return { ok: false, reason: 'bad_signature' };
  if (!hexEquals(signature, hmacHex('sha256', applicationManagementToken, request.rawBody)))
    return { ok: false, reason: 'bad_signature' };
  // Read only from a body whose signature matched: deliveredAt is signed.
  const parsed = parseJson(request.rawBody.toString('utf8'));
  const meta = parsed.ok && isObject(parsed.value) && isObject(parsed.value.meta) ? parsed.value.meta : {};
  const deliveredAt = parseTime(meta.deliveredAt);
  if (
    deliveredAt &&
    (deliveredAt.getTime() < now.getTime() - replayWindowMs ||
      deliveredAt.getTime() > now.getTime() + deliveredAtSkewMs)
  )
    return { ok: false, reason: 'stale_timestamp' };
  return { ok: true };
}

/** The reply to a VERIFY event: `{"challenge": hex HMAC-SHA256(AMT, challenge)}`, due within 15 s. */
export function smartcarVerifyChallenge(challenge: string, applicationManagementToken: string): { challenge: string } {
  return { challenge: hmacHex('sha256', applicationManagementToken, challenge) };
}

/** The challenge when `body` (parsed JSON, or its text/bytes) is a VERIFY event, else null. */
export function isSmartcarVerify(body: unknown): string | null {
  let value = body;
  if (typeof body === 'string' || Buffer.isBuffer(body)) {
    const parsed = parseJson(body.toString());
    if (!parsed.ok) return null;
    value = parsed.value;
  }
  if (!isObject(value) || value.eventType !== 'VERIFY' || !isObject(value.data)) return null;
  const challenge = value.data.challenge;
  return typeof challenge === 'string' && challenge !== '' ? challenge : null;
}

/**
 * The VERIFY handshake of a verified push. The answer is an HMAC under the same key as
 * SC-Signature, so only token-like challenges are answered: the answer can never sign an event.
 */
export function smartcarHandshake(request: PushRequest, applicationManagementToken: string): HandshakeResult | null {
  const challenge = isSmartcarVerify(request.rawBody);
  if (challenge === null) return null;
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(challenge))
    return { ok: false, field: 'data.challenge', message: 'is not a challenge token' };
  return { ok: true, answer: smartcarVerifyChallenge(challenge, applicationManagementToken) };
}

/** Retries of one event share its `eventId`; a body without one is told apart by its bytes. */
export function smartcarReplayKey(request: PushRequest): string {
  const parsed = parseJson(request.rawBody.toString('utf8'));
  const eventId = parsed.ok && isObject(parsed.value) ? parsed.value.eventId : undefined;
  return typeof eventId === 'string' && eventId !== '' ? `event:${eventId}` : bodyReplayKey(request);
}

function headerOf(headers: unknown, name: string): unknown {
  if (!isObject(headers)) return undefined;
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === name) return value;
  return undefined;
}

function present(value: unknown): unknown {
  return value === null ? undefined : value;
}

/** A percentage kept under its own (not vocabulary) name, so checked here: 0–100. */
function addPercent(
  collector: SampleCollector,
  vehicleId: string,
  signal: string,
  at: Date | null,
  value: unknown,
): void {
  if (value === null || value === undefined) return;
  const percent = finiteNumber(value);
  if (percent === null || percent < 0 || percent > 100) collector.skip(`${signal} ${String(value)} out of range`);
  else collector.add(vehicleId, signal, at, percent);
}

/** `system_status_<system>` from a system's status; the name is ours, so only word characters pass. */
function addSystemStatus(
  collector: SampleCollector,
  vehicleId: string,
  system: string,
  at: Date | null,
  status: unknown,
): void {
  const name = system.toLowerCase();
  if (!/^[a-z0-9]{1,40}$/.test(name)) collector.skip('system status of an unreadable system');
  else if (status === 'ALERT' || status === 'OK') collector.add(vehicleId, `system_status_${name}`, at, status);
  else collector.skip(`system_status_${name} ${String(status)} unknown`);
}

function dtcOf(entry: unknown): unknown {
  return isObject(entry) ? { code: entry.code } : entry;
}

/** `wheel-tires` → the four corners of tire_pressure_kpa (first/last row, first/last column). */
function addWheelTires(
  collector: SampleCollector,
  vehicleId: string,
  at: Date | null,
  body: Record<string, unknown>,
): void {
  if (!Array.isArray(body.values)) {
    collector.skip('signal wheel-tires without values');
    return;
  }
  const factor =
    body.unit === undefined || body.unit === 'kPa' || body.unit === 'kilopascals'
      ? 1
      : body.unit === 'psi'
        ? kpaPerPsi
        : null;
  if (factor === null) {
    collector.skip(`signal wheel-tires unit ${String(body.unit)} unknown`);
    return;
  }
  const wheels = body.values.filter(isObject);
  // Without rowCount/columnCount the highest row and column given are the rear and the right.
  const highest = (key: 'row' | 'column') => wheels.reduce((max, w) => Math.max(max, finiteNumber(w[key]) ?? 0), 0);
  const rowCount = finiteNumber(body.rowCount);
  const columnCount = finiteNumber(body.columnCount);
  const lastRow = rowCount === null ? highest('row') : rowCount - 1;
  const lastColumn = columnCount === null ? highest('column') : columnCount - 1;
  const corner = (row: number, column: number) =>
    scaled(
      wheels.find((w) => finiteNumber(w.row) === row && finiteNumber(w.column) === column)?.tirePressure,
      factor,
    ) ?? null;
  collector.add(vehicleId, 'tire_pressure_kpa', at, {
    front_left: corner(0, 0),
    front_right: corner(0, lastColumn),
    rear_left: corner(lastRow, 0),
    rear_right: corner(lastRow, lastColumn),
  });
}

/** One v4 signal. */
function addSignal(collector: SampleCollector, vehicleId: string, signal: unknown): void {
  if (!isObject(signal)) {
    collector.skip('signal is not an object');
    return;
  }
  const code = typeof signal.code === 'string' ? signal.code : String(signal.code);
  const status = isObject(signal.status) ? signal.status : {};
  if (status.value === 'ERROR') {
    const error = isObject(status.error) && typeof status.error.code === 'string' ? ` (${status.error.code})` : '';
    collector.skip(`signal ${code} status ERROR${error}`);
    return;
  }
  const body = signal.body;
  if (!isObject(body)) {
    collector.skip(`signal ${code} has no body`);
    return;
  }
  const meta = isObject(signal.meta) ? signal.meta : {};
  // Epoch milliseconds; oemUpdatedAt is when the carmaker recorded the value.
  const at = parseTime(meta.oemUpdatedAt) ?? parseTime(meta.retrievedAt);
  switch (code) {
    case 'odometer-traveleddistance': {
      // unit "kilometers" → as is; "miles" → ×1.609344.
      const factor = body.unit === 'kilometers' ? 1 : body.unit === 'miles' ? kmPerMile : null;
      if (factor === null) collector.skip(`signal ${code} unit ${String(body.unit)} unknown`);
      else collector.add(vehicleId, 'odometer_km', at, scaled(body.value, factor));
      return;
    }
    case 'location-preciselocation':
      if ((body.latitude ?? null) === null && (body.longitude ?? null) === null) return;
      collector.add(vehicleId, 'location', at, {
        lat: body.latitude,
        lon: body.longitude,
        heading: finiteNumber(body.heading),
      });
      return;
    case 'motion-currentspeed': {
      // "kph" → as is; "mph" → ×1.609344.
      const factor = body.unit === 'kph' ? 1 : body.unit === 'mph' ? kmPerMile : null;
      if (factor === null) collector.skip(`signal ${code} unit ${String(body.unit)} unknown`);
      else collector.add(vehicleId, 'speed_kph', at, scaled(body.value, factor));
      return;
    }
    case 'internalcombustionengine-fuellevel': // percent 0–100 (unlike v2's fraction)
      collector.add(vehicleId, 'fuel_percent', at, present(body.value));
      return;
    case 'internalcombustionengine-oillife': // percent 0–100
      collector.add(vehicleId, 'oil_life_percent', at, present(body.value));
      return;
    case 'tractionbattery-stateofcharge':
      addPercent(collector, vehicleId, 'ev_battery_percent', at, body.value);
      return;
    case 'wheel-tires':
      addWheelTires(collector, vehicleId, at, body);
      return;
    case 'diagnostics-dtclist':
      // The full list of active codes (an empty list clears them); the per-code timestamp is when it was first logged.
      collector.add(vehicleId, 'dtcs', at, Array.isArray(body.values) ? body.values.map(dtcOf) : body.values);
      return;
    case 'diagnostics-mil':
      if (body.status === 'ALERT' || body.status === 'OK')
        collector.add(vehicleId, 'check_engine_light', at, body.status === 'ALERT');
      else collector.skip(`signal ${code} status ${String(body.status)} unknown`);
      return;
    case 'lowvoltagebattery-stateofcharge': {
      // Percent 0–100 of the 12 V battery's charge; kept under its own name (not volts).
      addPercent(collector, vehicleId, 'low_voltage_battery_percent', at, body.value);
      return;
    }
    case 'lowvoltagebattery-status':
      if (body.value === 'GOOD' || body.value === 'WARN' || body.value === 'BAD')
        collector.add(vehicleId, 'low_voltage_battery_status', at, body.value);
      else if (body.value !== null && body.value !== undefined)
        collector.skip(`low_voltage_battery_status ${String(body.value)} unknown`);
      return;
    default:
      // diagnostics-abs, -airbag, -transmission, …: a system's ALERT|OK, kept for monitoring.
      if (code.startsWith('diagnostics-'))
        addSystemStatus(collector, vehicleId, code.slice('diagnostics-'.length), at, body.status);
      return; // other codes are ignored
  }
}
function normalizeVehicleState(collector: SampleCollector, event: Record<string, unknown>): NormalizeResult | null {
  const data = isObject(event.data) ? event.data : {};
  const vehicle = isObject(data.vehicle) ? data.vehicle : {};
  const vehicleId = typeof vehicle.id === 'string' ? vehicle.id.trim() : '';
  if (!vehicleId) return { ok: false, reason: 'VEHICLE_STATE without data.vehicle.id' };
  if (!Array.isArray(data.signals)) return { ok: false, reason: 'VEHICLE_STATE without data.signals' };
  for (const signal of data.signals) addSignal(collector, vehicleId, signal);
  return null;
}

/** The factor from the unit system's distance unit to km, or null when the system is unknown. */
function distanceFactor(unitSystem: string): number | null {
  // metric: km; imperial: miles → ×1.609344.
  return unitSystem === 'metric' ? 1 : unitSystem === 'imperial' ? kmPerMile : null;
}

/** One v2.0 batch entry. */
function addBatchEntry(
  collector: SampleCollector,
  vehicleId: string,
  entry: unknown,
  defaultUnits: string,
  receivedAt: Date,
): void {
  if (!isObject(entry)) {
    collector.skip('batch entry is not an object');
    return;
  }
  const path = String(entry.path);
  const code = finiteNumber(entry.code);
  if (code !== 200) {
    const error = isObject(entry.body) && typeof entry.body.code === 'string' ? ` ${entry.body.code}` : '';
    collector.skip(`${path} returned ${String(entry.code)}${error}`);
    return;
  }
  const body = entry.body;
  if (!isObject(body)) {
    collector.skip(`${path} has no body`);
    return;
  }
  // SC-Data-Age is when the vehicle recorded the value; else the time we received it.
  const dataAge = headerOf(entry.headers, 'sc-data-age');
  const at = dataAge === null || dataAge === undefined ? receivedAt : parseTime(dataAge);
  const unitHeader = headerOf(entry.headers, 'sc-unit-system');
  const units = typeof unitHeader === 'string' ? unitHeader : defaultUnits;
  switch (path) {
    case '/odometer': {
      const factor = distanceFactor(units);
      if (factor === null) collector.skip(`${path} unit system ${units} unknown`);
      else collector.add(vehicleId, 'odometer_km', at, scaled(body.distance, factor));
      return;
    }
    case '/fuel':
      // percentRemaining is a fraction: 0.3 = 30 % → ×100.
      collector.add(vehicleId, 'fuel_percent', at, scaled(body.percentRemaining, 100));
      return;
    case '/engine/oil':
      // lifeRemaining is a fraction → ×100.
      collector.add(vehicleId, 'oil_life_percent', at, scaled(body.lifeRemaining, 100));
      return;
    case '/tires/pressure': {
      // metric: kPa [UNCONFIRMED]; imperial: psi → ×6.894757.
      const factor = units === 'metric' ? 1 : units === 'imperial' ? kpaPerPsi : null;
      if (factor === null) {
        collector.skip(`${path} unit system ${units} unknown`);
        return;
      }
      const tires = {
        front_left: body.frontLeft,
        front_right: body.frontRight,
        rear_left: body.backLeft,
        rear_right: body.backRight,
      };
      if (Object.values(tires).every((value) => value === null || value === undefined)) return;
      const converted = Object.fromEntries(
        Object.entries(tires).map(([key, value]) => [key, scaled(value, factor) ?? null]),
      );
      collector.add(vehicleId, 'tire_pressure_kpa', at, converted);
      return;
    }
    case '/location':
      if ((body.latitude ?? null) === null && (body.longitude ?? null) === null) return;
      collector.add(vehicleId, 'location', at, { lat: body.latitude, lon: body.longitude, heading: null });
      return;
    case '/diagnostics/dtcs':
      // The full list of active codes at SC-Data-Age (an empty list clears them); the per-code
      // `timestamp` (often null) is not used.
      if ((body.activeCodes ?? null) === null) return;
      collector.add(
        vehicleId,
        'dtcs',
        at,
        Array.isArray(body.activeCodes) ? body.activeCodes.map(dtcOf) : body.activeCodes,
      );
      return;
    case '/battery':
      // The EV traction battery; percentRemaining is a fraction → ×100.
      addPercent(collector, vehicleId, 'ev_battery_percent', at, scaled(body.percentRemaining, 100));
      return;
    case '/diagnostics/system_status':
      // systemId "SYSTEM_ABS" → system_status_abs, like the v4 diagnostics-<system> signals.
      for (const system of Array.isArray(body.systems) ? body.systems : []) {
        if (!isObject(system) || typeof system.systemId !== 'string') collector.skip(`${path} entry without systemId`);
        else addSystemStatus(collector, vehicleId, system.systemId.replace(/^SYSTEM_/, ''), at, system.status);
      }
      return;
    default:
      return; // paths we did not ask for are ignored
  }
}

function normalizeBatch(
  collector: SampleCollector,
  wrapper: Record<string, unknown>,
  receivedAt: Date,
): NormalizeResult | null {
  const vehicleId = typeof wrapper.smartcar_vehicle_id === 'string' ? wrapper.smartcar_vehicle_id.trim() : '';
  if (!vehicleId) return { ok: false, reason: 'smartcar_vehicle_id is missing' };
  const response = wrapper.response;
  if (!isObject(response) || !Array.isArray(response.responses))
    return { ok: false, reason: 'batch response without responses' };
  const units = typeof wrapper.unit_system === 'string' ? wrapper.unit_system : 'metric';
  for (const entry of response.responses) addBatchEntry(collector, vehicleId, entry, units, receivedAt);
  return null;
}

export function normalizeSmartcar(raw: RawPayload, receivedAt: Date): NormalizeResult {
  const parsed = parseJson(raw.body);
  if (!parsed.ok) return { ok: false, reason: 'body is not JSON' };
  const body = parsed.value;
  if (!isObject(body)) return { ok: false, reason: 'expected a Smartcar webhook event or batch wrapper' };
  const collector = new SampleCollector();
  let failed: NormalizeResult | null = null;
  if ('smartcar_vehicle_id' in body) failed = normalizeBatch(collector, body, receivedAt);
  else if (body.eventType === 'VEHICLE_STATE') failed = normalizeVehicleState(collector, body);
  else if (body.eventType === 'VERIFY') failed = null;
  else if (typeof body.eventType === 'string') collector.skip(`event type ${body.eventType} carries no vehicle state`);
  else return { ok: false, reason: 'expected a Smartcar webhook event or batch wrapper' };
  return failed ?? { ok: true, samples: collector.samples, events: [], skipped: collector.skipped };
}

export const smartcar: ProviderAdapter = {
  id: 'smartcar',
  normalize: (raw: RawPayload, receivedAt: Date) => normalizeSmartcar(raw, receivedAt),
  refresh: 'supported',
  push: {
    verify: verifySmartcarSignature,
    handshake: smartcarHandshake,
    bodyProblem: jsonBodyProblem,
    replayKey: smartcarReplayKey,
    tokenInPath: false,
    signatureHeaders: [signatureHeader],
  },
  connection: {
    problems: (config) => requiredKeys(config, ['webhook_secret'], 'for Smartcar (the application management token)'),
    defaultBaseUrl: 'https://api.smartcar.com',
  },
};
