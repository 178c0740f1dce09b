/**
 * Smartcar adapter: research/providers.md §4 and §7.
 *
 * `normalize` accepts:
 *
 * 1. The v4 webhook `VEHICLE_STATE` event (§4.1, §4.3):
 *      {"eventId", "eventType": "VEHICLE_STATE", "data": {"vehicle": {"id", ...},
 *       "signals": [{"code", "name", "group", "body", "status": {"value"}, "meta": {"retrievedAt", "oemUpdatedAt"}}]},
 *       "triggers", "meta"}
 *    Reading time = the signal's `meta.oemUpdatedAt` (epoch ms, when the carmaker recorded it),
 *    else `meta.retrievedAt` (§4.4). A signal with `status.value` ERROR or without `body` is
 *    skipped with a reason. Mapped codes (others are ignored):
 *    - `odometer-traveleddistance` `{unit: "kilometers"|"miles", value}` → odometer_km
 *    - `location-preciselocation` `{latitude, longitude, heading}` → location
 *    - `lowvoltagebattery-stateofcharge` `{unit: "percent", value}` → `low_voltage_battery_percent`
 *      (the 12 V battery's state of charge in %, NOT its voltage, so never battery_voltage: §4.2)
 *    - `lowvoltagebattery-status` `{value: GOOD|WARN|BAD}` → `low_voltage_battery_status` (§4.2)
 * 2. `{"eventType": "VERIFY", "data": {"challenge"}}`: ok with nothing in it (the reply is built
 *    by `smartcarVerifyChallenge`). Other event types are ok with one skip reason.
 * 3. The wrapper smartcar.client.ts stores for a v2.0 batch (§4.1, §4.3):
 *      {"smartcar_vehicle_id", "unit_system": "metric"|"imperial",
 *       "response": {"responses": [{"path", "code", "body", "headers": {"sc-data-age", "sc-unit-system"}}]}}
 *    Reading time = the entry's `sc-data-age`, else the time the payload was received. The unit
 *    system is the entry's `sc-unit-system`, else the wrapper's, else metric (Smartcar's default).
 *    Non-200 entries are skipped with a reason. `/battery` is the EV traction battery and is not
 *    requested or mapped.
 *
 * Push signature: `SC-Signature` = hex HMAC-SHA256(application management token, raw body), no
 * timestamp. The raw body is verified, not a re-serialization (§7: the SDK's helper is wrong).
 */
import { kmPerMile } from '../src/domain/units.js';
import { header, hexEquals, hmacHex } from './signing.js';
import type { NormalizeResult, ProviderAdapter, PushRequest, RawPayload, VerifyResult } from './types.js';
import { SampleCollector, finiteNumber, isObject, parseJson, parseTime, scaled } from './values.js';

/** Statute mile in km (exact by definition). */
/** Pound-force per square inch in kPa. */
const kpaPerPsi = 6.894757;

export function verifySmartcarSignature(request: PushRequest, applicationManagementToken: string): VerifyResult {
  const given = header(request.headers, 'sc-signature');
  if (!given) return { ok: false, reason: 'missing_signature' };
  const signature = given.trim();
  // An empty token would make the HMAC forgeable by anyone: never accept it.
  if (!applicationManagementToken || !/^[0-9a-fA-F]{64}$/.test(signature)) return { ok: false, reason: 'bad_signature' };
  return hexEquals(signature, hmacHex('sha256', applicationManagementToken, request.rawBody)) ? { ok: true } : { ok: false, reason: 'bad_signature' };
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

function headerOf(headers: unknown, name: string): unknown {
  if (!isObject(headers)) return undefined;
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === name) return value;
  return undefined;
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
  // Epoch milliseconds; oemUpdatedAt is when the carmaker recorded the value (§4.4).
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
      collector.add(vehicleId, 'location', at, { lat: body.latitude, lon: body.longitude, heading: finiteNumber(body.heading) });
      return;
    case 'lowvoltagebattery-stateofcharge': {
      // Percent 0–100 of the 12 V battery's charge; kept under its own name (not volts).
      if (body.value === null || body.value === undefined) return;
      const percent = finiteNumber(body.value);
      if (percent === null || percent < 0 || percent > 100) collector.skip(`low_voltage_battery_percent ${String(body.value)} out of range`);
      else collector.add(vehicleId, 'low_voltage_battery_percent', at, percent);
      return;
    }
    case 'lowvoltagebattery-status':
      if (body.value === 'GOOD' || body.value === 'WARN' || body.value === 'BAD') collector.add(vehicleId, 'low_voltage_battery_status', at, body.value);
      else if (body.value !== null && body.value !== undefined) collector.skip(`low_voltage_battery_status ${String(body.value)} unknown`);
      return;
    default:
      return; // unknown codes are ignored
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
function addBatchEntry(collector: SampleCollector, vehicleId: string, entry: unknown, defaultUnits: string, receivedAt: Date): void {
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
  // SC-Data-Age is when the vehicle recorded the value (§4.1); else the time we received it.
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
      // metric: kPa [UNCONFIRMED, §4.2]; imperial: psi → ×6.894757.
      const factor = units === 'metric' ? 1 : units === 'imperial' ? kpaPerPsi : null;
      if (factor === null) {
        collector.skip(`${path} unit system ${units} unknown`);
        return;
      }
      const tires = { front_left: body.frontLeft, front_right: body.frontRight, rear_left: body.backLeft, rear_right: body.backRight };
      if (Object.values(tires).every((value) => value === null || value === undefined)) return;
      const converted = Object.fromEntries(Object.entries(tires).map(([key, value]) => [key, scaled(value, factor) ?? null]));
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
      collector.add(vehicleId, 'dtcs', at, Array.isArray(body.activeCodes) ? body.activeCodes.map((dtc) => (isObject(dtc) ? { code: dtc.code } : dtc)) : body.activeCodes);
      return;
    default:
      return; // paths we did not ask for are ignored
  }
}

function normalizeBatch(collector: SampleCollector, wrapper: Record<string, unknown>, receivedAt: Date): NormalizeResult | null {
  const vehicleId = typeof wrapper.smartcar_vehicle_id === 'string' ? wrapper.smartcar_vehicle_id.trim() : '';
  if (!vehicleId) return { ok: false, reason: 'smartcar_vehicle_id is missing' };
  const response = wrapper.response;
  if (!isObject(response) || !Array.isArray(response.responses)) return { ok: false, reason: 'batch response without responses' };
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
  verifyPush: (request, secret) => verifySmartcarSignature(request, secret),
  normalize: (raw: RawPayload, receivedAt: Date) => normalizeSmartcar(raw, receivedAt),
  refresh: 'supported',
};
