/**
 * Geotab (MyGeotab) adapter (docs/providers/geotab.md). Pull only: Geotab never pushes, so there is
 * no signature to verify.
 *
 * Payloads it normalizes, JSON-RPC responses from `POST {server}/apiv1`:
 * - `GetFeed`: `{"result": {"toVersion": "...", "data": [...]}}`; `toVersion` is the next cursor
 *   (the wrapper keys are UNCONFIRMED: not in Geotab's documentation);
 * - `Get`: `{"result": [...]}`, and `ExecuteMultiCall` of Gets: `{"result": [[...], [...]]}`;
 * - an error: `{"error": {name, message, errors[]}}` → not ok.
 *
 * Records carry no type name, so the type is told by its fields:
 * - ExceptionEvent `{device{id}, rule{id}, activeFrom}` → provider events;
 * - LogRecord `{device{id}, dateTime, latitude, longitude, speed}` → location and speed (km/h);
 * - StatusData `{device{id}, diagnostic{id}, dateTime, data}` → the diagnostics below, others ignored;
 * - FaultData `{device{id}, diagnostic{id}, dateTime, faultState, malfunctionLamp, ...}` → dtcs.
 * Entity shapes and most diagnostic ids are 3rd-party (docs/providers/geotab.md).
 */
import type { ProviderEvent, ProviderEventKind } from '../src/domain/sample.js';
import { requiredKeys } from './connection.js';
import type { NormalizeResult, ProviderAdapter, RawPayload } from './types.js';
import { SampleCollector, checkSignal, finiteNumber, isObject, parseJson, parseTime } from './values.js';

/** An entity reference: `{id}` as Geotab serializes it, or a bare id string. */
function refId(value: unknown): string {
  const id = isObject(value) ? value.id : value;
  return (typeof id === 'string' && id.trim() !== '') || (typeof id === 'number' && Number.isFinite(id))
    ? String(id)
    : '';
}

function divided(value: unknown, divisor: number): unknown {
  const n = finiteNumber(value);
  return n === null ? value : n / divisor;
}

/**
 * StatusData diagnostics → signal and conversion. All three odometer series are in metres
 * (go-device-logging guide): Raw is the ECU value and Odometer is raw × factor + offset, both ECU
 * odometers; OdometerAdjustment is the last ECU value plus GPS distance since (GPS-only without an
 * ECU odometer), so it is the GPS-derived series and never counts as a current ECU reading.
 */
const statusDiagnostics: Record<string, { signal: string; convert: (value: unknown) => unknown }> = {
  DiagnosticOdometerId: { signal: 'odometer_km', convert: (v) => divided(v, 1000) }, // m → km
  DiagnosticRawOdometerId: { signal: 'odometer_km', convert: (v) => divided(v, 1000) }, // m → km
  DiagnosticOdometerAdjustmentId: { signal: 'gps_odometer_km', convert: (v) => divided(v, 1000) }, // m → km
  DiagnosticFuelLevelId: { signal: 'fuel_percent', convert: (v) => v }, // %
  DiagnosticGoDeviceVoltageId: { signal: 'battery_voltage', convert: (v) => v }, // V
  DiagnosticEngineCoolantTemperatureId: { signal: 'coolant_temp_c', convert: (v) => v }, // °C
  // 0 = off, 1 = on; anything else is passed on and skipped as an unknown engine state.
  DiagnosticIgnitionId: {
    signal: 'engine_state',
    convert: (v) => (finiteNumber(v) === 0 ? 'off' : finiteNumber(v) === 1 ? 'on' : v),
  },
};

/**
 * Tire pressure diagnostics, apparently in Pa (UNCONFIRMED, seen in a 3rd-party integration) → kPa.
 * Each record is one tire, so each becomes a partial `tire_pressure_kpa` (the other tires null).
 */
const tireDiagnostics: Record<string, string> = {
  DiagnosticTirePressureFrontLeftId: 'front_left',
  DiagnosticTirePressureFrontRightId: 'front_right',
  DiagnosticTirePressureRearLeftId: 'rear_left',
  DiagnosticTirePressureRearRightId: 'rear_right',
};

const ruleKinds: Record<string, ProviderEventKind> = {
  RuleHarshBrakingId: 'hard_brake',
  RuleJackrabbitStartsId: 'hard_accel',
  RuleHarshCorneringId: 'hard_corner',
  RuleAccidentId: 'impact',
};

/** FaultData states that mean the fault is no longer present (FaultState enum, UNCONFIRMED spelling). */
const clearedFaultStates = new Set(['inactive', 'cleared', 'none']);

function normalizeStatusData(
  collector: SampleCollector,
  device: string,
  diagnostic: string,
  record: Record<string, unknown>,
): void {
  const recordedAt = parseTime(record.dateTime);
  const status = statusDiagnostics[diagnostic];
  if (status) {
    collector.add(device, status.signal, recordedAt, record.data === undefined ? null : status.convert(record.data));
    return;
  }
  const tire = tireDiagnostics[diagnostic];
  if (tire) {
    // Pa → kPa; a value that is not a number leaves no valid tire and is skipped by the range check.
    collector.add(device, 'tire_pressure_kpa', recordedAt, { [tire]: divided(record.data, 1000) });
  }
  // Other diagnostics (engine speed, accelerometer, ...) are not signals here.
}

/**
 * One FaultData record names one fault: an active fault becomes `dtcs: [{code: <diagnostic id>, mil}]`,
 * a cleared one an empty list. The lamp turns `check_engine_light` on; a record with the lamp off
 * says nothing about other faults, so it does not turn the light off.
 */
function normalizeFaultData(
  collector: SampleCollector,
  device: string,
  diagnostic: string,
  record: Record<string, unknown>,
): void {
  const recordedAt = parseTime(record.dateTime);
  const mil = record.malfunctionLamp === true;
  const cleared = typeof record.faultState === 'string' && clearedFaultStates.has(record.faultState.toLowerCase());
  collector.add(device, 'dtcs', recordedAt, cleared ? [] : [{ code: diagnostic, mil }]);
  if (mil && !cleared) collector.add(device, 'check_engine_light', recordedAt, true);
}

function normalizeRecord(collector: SampleCollector, events: ProviderEvent[], record: unknown): void {
  if (!isObject(record)) {
    collector.skip('record is not an object');
    return;
  }
  const device = refId(record.device);
  if (!device) {
    collector.skip('record without device id');
    return;
  }
  if (record.rule !== undefined) {
    const kind = ruleKinds[refId(record.rule)];
    if (!kind) return; // other rules (speeding, idling, ...) are not provider events
    const recordedAt = parseTime(record.activeFrom);
    if (!recordedAt) collector.skip(`exception ${refId(record.rule)} has no valid time`);
    else events.push({ providerVehicleId: device, kind, recordedAt, g: null });
    return;
  }
  if (record.latitude !== undefined || record.longitude !== undefined) {
    const recordedAt = parseTime(record.dateTime);
    const location = checkSignal('location', { lat: record.latitude, lon: record.longitude, heading: null }); // LogRecord has no heading
    if (!location.ok) {
      // The speed is the GPS speed of the same fix: without a fix it is not used either.
      collector.skip(location.reason);
      return;
    }
    collector.add(device, 'location', recordedAt, location.value);
    collector.add(device, 'speed_kph', recordedAt, record.speed); // km/h, no conversion
    return;
  }
  const diagnostic = refId(record.diagnostic);
  if (diagnostic && 'data' in record) normalizeStatusData(collector, device, diagnostic, record);
  else if (diagnostic && ('faultState' in record || 'malfunctionLamp' in record))
    normalizeFaultData(collector, device, diagnostic, record);
  else collector.skip('record of unknown type');
}

/** The text of a JSON-RPC error: its name, message and type, and those of its inner `errors`, each once. */
export function geotabErrorText(error: unknown): string {
  if (!isObject(error)) return String(error);
  const parts = [error.name, error.message, isObject(error.data) ? error.data.type : undefined];
  for (const inner of Array.isArray(error.errors) ? error.errors : [])
    if (isObject(inner)) parts.push(inner.name, inner.message);
  return [...new Set(parts.filter((part): part is string => typeof part === 'string' && part !== ''))].join(': ');
}

export function normalizeGeotab(raw: RawPayload): NormalizeResult {
  const parsed = parseJson(raw.body);
  if (!parsed.ok) return { ok: false, reason: 'body is not JSON' };
  const body = parsed.value;
  if (!isObject(body)) return { ok: false, reason: 'expected a JSON-RPC response {"result": ...}' };
  if (body.error !== undefined && body.error !== null)
    return { ok: false, reason: `JSON-RPC error: ${geotabErrorText(body.error)}` };
  const result = body.result;
  let records: unknown[];
  let cursor: { nextCursor?: string } = {};
  if (Array.isArray(result)) {
    records = result.flat();
  } else if (isObject(result) && Array.isArray(result.data)) {
    records = result.data;
    if (typeof result.toVersion === 'string' && result.toVersion !== '') cursor = { nextCursor: result.toVersion };
  } else {
    return { ok: false, reason: 'expected a JSON-RPC response {"result": ...}' };
  }
  const collector = new SampleCollector();
  const events: ProviderEvent[] = [];
  for (const record of records) normalizeRecord(collector, events, record);
  return { ok: true, samples: collector.samples, events, skipped: collector.skipped, ...cursor };
}

export const geotab: ProviderAdapter = {
  id: 'geotab',
  normalize: (raw: RawPayload) => normalizeGeotab(raw),
  refresh: 'supported',
  push: null,
  connection: {
    // Geotab has many servers (https://<server>), so there is no default base URL.
    problems: (config) => requiredKeys(config, ['base_url', 'database', 'username', 'password'], 'for Geotab'),
    pullsFeed: () => true,
  },
};
