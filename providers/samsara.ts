/**
 * Samsara adapter (docs/providers/samsara.md).
 *
 * Payloads it normalizes:
 * - Vehicle stats, `{"data": [{id, name, <stat>...}], "pagination": {endCursor, hasNextPage}}`:
 *   - snapshot (`GET /fleet/vehicles/stats`): singular keys, each stat one `{time, value}` object
 *     (`fuelPercent`, `engineState`);
 *   - feed and history (`/stats/feed`, `/stats/history`): plural keys, arrays of `{time, value}`
 *     (`fuelPercents`, `engineStates`), in any order.
 *   Every stat keeps its own time. `gps` and `faultCodes` entries carry their fields next to `time`
 *   instead of under `value`. Unknown keys are ignored.
 * - Safety events (`GET /fleet/safety-events` items, `{id, time, vehicle{id}, behaviorLabels[{type}],
 *   maxAccelerationGForce}`), in the same `{"data": [...]}` list: an item with `behaviorLabels` is an event.
 * - Webhook bodies `{eventId, eventType, eventTime, data{...}}`: `EngineFaultOn`/`EngineFaultOff`
 *   (`data.vehicle.id`, `data.fault.{j1939,oem,passenger}`) become a `dtcs` sample; other event types
 *   carry no telematics and are skipped.
 *
 * Push signature (webhooks): `X-Samsara-Timestamp: <unix s>`, `X-Samsara-Signature: v1=<hex>` where hex is
 * HMAC-SHA256 keyed with the Base64-DECODED secret over `v1:<timestamp>:<raw body>`; a timestamp more
 * than 5 minutes from now is stale. A replay inside those 5 minutes is a duplicate body (replay window).
 */
import { kmPerMile } from '../src/domain/units.js';
import type { ProviderEvent, ProviderEventKind } from '../src/domain/sample.js';
import { pushOrPullCredentials } from './connection.js';
import { bodyReplayKey, jsonBodyProblem } from './push.js';
import { header, hexEquals, hmacHex } from './signing.js';
import type { NormalizeResult, ProviderAdapter, PushRequest, RawPayload, VerifyResult } from './types.js';
import { SampleCollector, finiteNumber, isObject, parseJson, parseTime } from './values.js';

/** Largest accepted distance between `X-Samsara-Timestamp` and now, either way. */
export const samsaraTimestampToleranceSeconds = 300;

const signatureHeader = 'x-samsara-signature';

export function verifySamsaraSignature(request: PushRequest, secret: string, now: Date): VerifyResult {
  const timestamp = header(request.headers, 'x-samsara-timestamp');
  const given = header(request.headers, signatureHeader);
  if (!timestamp || !given) return { ok: false, reason: 'missing_signature' };
  const match = /^v1=([0-9a-fA-F]{64})$/.exec(given.trim());
  if (!/^\d+$/.test(timestamp.trim()) || !match) return { ok: false, reason: 'bad_signature' };
  const key = Buffer.from(secret, 'base64');
  const signed = Buffer.concat([Buffer.from(`v1:${timestamp.trim()}:`, 'utf8'), request.rawBody]);
  if (!hexEquals(match[1]!, hmacHex('sha256', key, signed))) return { ok: false, reason: 'bad_signature' };
  // Checked after the signature, so only an authentic but old (or future) request reads as stale.
  if (Math.abs(now.getTime() / 1000 - Number(timestamp.trim())) > samsaraTimestampToleranceSeconds)
    return { ok: false, reason: 'stale_timestamp' };
  return { ok: true };
}

function vehicleId(value: unknown): string {
  return (typeof value === 'string' && value.trim() !== '') || (typeof value === 'number' && Number.isFinite(value))
    ? String(value)
    : '';
}

/** `value / divisor` when numeric; otherwise the value unchanged, so the collector records why it was skipped. */
function divided(value: unknown, divisor: number): unknown {
  const n = finiteNumber(value);
  return n === null ? value : n / divisor;
}

function multiplied(value: unknown, factor: number): unknown {
  const n = finiteNumber(value);
  return n === null ? value : n * factor;
}

const engineStates: Record<string, string> = { Off: 'off', On: 'on', Idle: 'idle' };

/** Scalar `{time, value}` stats: key (singular snapshot or plural feed form) → signal and conversion. */
const scalarStats: Record<string, { signal: string; convert: (value: unknown) => unknown }> = {
  obdOdometerMeters: { signal: 'odometer_km', convert: (v) => divided(v, 1000) }, // m → km
  gpsOdometerMeters: { signal: 'gps_odometer_km', convert: (v) => divided(v, 1000) }, // m → km
  fuelPercent: { signal: 'fuel_percent', convert: (v) => v }, // % 0–100
  fuelPercents: { signal: 'fuel_percent', convert: (v) => v },
  batteryMilliVolts: { signal: 'battery_voltage', convert: (v) => divided(v, 1000) }, // mV → V
  engineCoolantTemperatureMilliC: { signal: 'coolant_temp_c', convert: (v) => divided(v, 1000) }, // milli-°C → °C
  ecuSpeedMph: { signal: 'speed_kph', convert: (v) => multiplied(v, kmPerMile) }, // mph → km/h
  engineState: { signal: 'engine_state', convert: (v) => (typeof v === 'string' && engineStates[v]) || v }, // Off|On|Idle
  engineStates: { signal: 'engine_state', convert: (v) => (typeof v === 'string' && engineStates[v]) || v },
  obdEngineSeconds: { signal: 'engine_hours', convert: (v) => divided(v, 3600) }, // s → h
};

/** A snapshot stat is one object, a feed/history stat an array of them; both become a list. */
function statEntries(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [value];
}

type RawDtc = { code: string; mil: boolean };

function milOn(milStatus: unknown): boolean | null {
  const n = finiteNumber(milStatus);
  return n === null ? null : n > 0;
}

/**
 * A fault container as a list of codes: the stats shape `{diagnosticTroubleCodes: [...]}`, a bare
 * array, or one code object (the webhook `data.fault.*` shapes are UNCONFIRMED, so all three are accepted).
 */
function codeItems(container: unknown): unknown[] {
  if (Array.isArray(container)) return container;
  if (!isObject(container)) return [];
  return Array.isArray(container.diagnosticTroubleCodes) ? container.diagnosticTroubleCodes : [container];
}

/** J1939 codes as `SPN<spnId>-FMI<fmiId>`, MIL from the code's `milStatus`. */
function j1939Dtcs(container: unknown): RawDtc[] {
  const result: RawDtc[] = [];
  for (const item of codeItems(container)) {
    if (!isObject(item)) continue;
    const spn = finiteNumber(item.spnId);
    const fmi = finiteNumber(item.fmiId);
    if (spn === null || fmi === null) continue;
    result.push({ code: `SPN${spn}-FMI${fmi}`, mil: milOn(item.milStatus) === true });
  }
  return result;
}

/**
 * OBD-II (passenger) codes: each ECU entry's `confirmedDtcs[].dtcShortCode` (pending and permanent
 * codes are not active faults); MIL from the entry's `milStatus`, else the vehicle's `checkEngineLightIsOn`.
 */
function obdiiDtcs(container: unknown): RawDtc[] {
  const light = isObject(container) && container.checkEngineLightIsOn === true;
  const result: RawDtc[] = [];
  for (const item of codeItems(container)) {
    if (!isObject(item)) continue;
    const mil = milOn(item.milStatus) ?? light;
    const codes = Array.isArray(item.confirmedDtcs) ? item.confirmedDtcs : [item];
    for (const dtc of codes) {
      if (isObject(dtc) && typeof dtc.dtcShortCode === 'string' && dtc.dtcShortCode.trim() !== '')
        result.push({ code: dtc.dtcShortCode, mil });
    }
  }
  return result;
}

/** OEM codes by `codeIdentifier`; they have no MIL status. */
function oemDtcs(container: unknown): RawDtc[] {
  const result: RawDtc[] = [];
  for (const item of codeItems(container)) {
    if (isObject(item) && typeof item.codeIdentifier === 'string' && item.codeIdentifier.trim() !== '')
      result.push({ code: item.codeIdentifier, mil: false });
  }
  return result;
}

/** One entry per code (two ECUs may report the same one); MIL if any report has it on. */
function uniqueDtcs(dtcs: RawDtc[]): RawDtc[] {
  const byCode = new Map<string, RawDtc>();
  for (const dtc of dtcs) {
    const key = dtc.code.trim().toUpperCase();
    const seen = byCode.get(key);
    byCode.set(key, { code: dtc.code, mil: dtc.mil || (seen?.mil ?? false) });
  }
  return [...byCode.values()];
}

/** `faultCodes` → `dtcs` and `check_engine_light` at the entry's own time. */
function addFaultCodes(collector: SampleCollector, vehicle: string, entry: Record<string, unknown>): void {
  const recordedAt = parseTime(entry.time);
  // The stats type puts the fields next to `time`; some SDK versions wrap them in `value`.
  const fault = isObject(entry.value) ? entry.value : entry;
  const dtcs = uniqueDtcs([...obdiiDtcs(fault.obdii), ...j1939Dtcs(fault.j1939), ...oemDtcs(fault.oem)]);
  collector.add(vehicle, 'dtcs', recordedAt, dtcs);
  const lights: boolean[] = [];
  if (isObject(fault.obdii) && typeof fault.obdii.checkEngineLightIsOn === 'boolean')
    lights.push(fault.obdii.checkEngineLightIsOn);
  if (isObject(fault.j1939) && isObject(fault.j1939.checkEngineLights))
    lights.push(Object.values(fault.j1939.checkEngineLights).some((flag) => flag === true));
  if (lights.length > 0) collector.add(vehicle, 'check_engine_light', recordedAt, lights.some(Boolean));
}

const tireKeys: Array<[string, string]> = [
  ['frontlefttirepressurekpa', 'front_left'],
  ['frontrighttirepressurekpa', 'front_right'],
  ['rearlefttirepressurekpa', 'rear_left'],
  ['rearrighttirepressurekpa', 'rear_right'],
];

/**
 * `tirePressure{frontLeftTirePressureKPa,…}` (kPa, no conversion). The notes find it only in the
 * decorations schema; its exact placement and key casing are UNCONFIRMED, so keys match case-insensitively.
 */
function tirePressure(value: Record<string, unknown>): Record<string, unknown> {
  const lower = new Map(Object.entries(value).map(([key, v]) => [key.toLowerCase(), v]));
  return Object.fromEntries(tireKeys.map(([key, tire]) => [tire, lower.get(key) ?? null]));
}

function addTirePressure(collector: SampleCollector, vehicle: string, recordedAt: Date | null, value: unknown): void {
  if (!isObject(value)) {
    collector.skip('tirePressure is not an object');
    return;
  }
  collector.add(vehicle, 'tire_pressure_kpa', recordedAt, tirePressure(value));
}

function normalizeVehicleStats(collector: SampleCollector, item: Record<string, unknown>): void {
  const vehicle = vehicleId(item.id);
  if (!vehicle) {
    collector.skip('vehicle without id');
    return;
  }
  for (const [key, stat] of Object.entries(item)) {
    const scalar = scalarStats[key];
    const known = scalar || key === 'gps' || key === 'faultCodes' || key === 'tirePressure' || key === 'tirePressures';
    if (!known) continue; // id, name, externalIds and stats we do not map
    for (const entry of statEntries(stat)) {
      if (!isObject(entry)) {
        collector.skip(entry === null ? `${key} is empty` : `${key} entry is not an object`);
        continue;
      }
      const recordedAt = parseTime(entry.time);
      if (scalar) {
        collector.add(
          vehicle,
          scalar.signal,
          recordedAt,
          entry.value === undefined ? null : scalar.convert(entry.value),
        );
      } else if (key === 'gps') {
        // The location and the GPS speed are taken at the gps point's own time.
        collector.add(vehicle, 'location', recordedAt, {
          lat: entry.latitude,
          lon: entry.longitude,
          heading: entry.headingDegrees ?? null,
          address: isObject(entry.reverseGeo) ? entry.reverseGeo.formattedLocation : undefined,
        });
        collector.add(vehicle, 'speed_kph', recordedAt, multiplied(entry.speedMilesPerHour, kmPerMile)); // mph → km/h
      } else if (key === 'faultCodes') {
        addFaultCodes(collector, vehicle, entry);
      } else {
        addTirePressure(collector, vehicle, recordedAt, isObject(entry.value) ? entry.value : entry);
      }
      // Decorations (UNCONFIRMED placement) carry other stats at this entry's time; only tire pressure is taken.
      if (isObject(entry.decorations) && entry.decorations.tirePressure !== undefined)
        addTirePressure(collector, vehicle, recordedAt, entry.decorations.tirePressure);
    }
  }
}

/**
 * Safety event `behaviorLabels[].type` → event kind. The notes name the field `type`; some
 * integrators read `label` (UNCONFIRMED), which is used when `type` is absent.
 */
const behaviorKinds: Record<string, ProviderEventKind> = {
  acceleration: 'hard_accel',
  braking: 'hard_brake',
  harshTurn: 'hard_corner',
  crash: 'impact',
};

function normalizeSafetyEvent(
  collector: SampleCollector,
  events: ProviderEvent[],
  item: Record<string, unknown>,
): void {
  const vehicle = isObject(item.vehicle) ? vehicleId(item.vehicle.id) : '';
  const recordedAt = parseTime(item.time);
  if (!vehicle || !recordedAt) {
    collector.skip('safety event without vehicle or time');
    return;
  }
  const kinds = new Set<ProviderEventKind>();
  for (const label of Array.isArray(item.behaviorLabels) ? item.behaviorLabels : []) {
    const type = isObject(label) ? (label.type ?? label.label) : undefined;
    const kind = typeof type === 'string' ? behaviorKinds[type] : undefined;
    if (kind) kinds.add(kind); // other behaviours (speeding, distraction, ...) are not provider events here
  }
  for (const kind of kinds)
    events.push({ providerVehicleId: vehicle, kind, recordedAt, g: finiteNumber(item.maxAccelerationGForce) });
}

/**
 * EngineFaultOn/Off webhook → one `dtcs` sample at `eventTime`. The webhook names the faults that
 * changed, not the vehicle's full list: On reports the codes in `data.fault`, Off reports an empty
 * list (the fault cleared). The `data.fault.*` shapes are UNCONFIRMED (beta webhook).
 */
function normalizeEngineFault(
  collector: SampleCollector,
  eventType: string,
  body: Record<string, unknown>,
  data: Record<string, unknown>,
): void {
  const vehicle = isObject(data.vehicle) ? vehicleId(data.vehicle.id) : '';
  if (!vehicle) {
    collector.skip(`${eventType} without vehicle id`);
    return;
  }
  const recordedAt = parseTime(body.eventTime);
  if (eventType === 'EngineFaultOff') {
    collector.add(vehicle, 'dtcs', recordedAt, []);
    return;
  }
  const fault = isObject(data.fault) ? data.fault : {};
  const dtcs = uniqueDtcs([...j1939Dtcs(fault.j1939), ...obdiiDtcs(fault.passenger), ...oemDtcs(fault.oem)]);
  if (dtcs.length === 0) collector.skip('EngineFaultOn without a fault code');
  else collector.add(vehicle, 'dtcs', recordedAt, dtcs);
}

export function normalizeSamsara(raw: RawPayload): NormalizeResult {
  const parsed = parseJson(raw.body);
  if (!parsed.ok) return { ok: false, reason: 'body is not JSON' };
  const body = parsed.value;
  if (!isObject(body)) return { ok: false, reason: 'expected {"data": [...]} or a webhook event' };
  const collector = new SampleCollector();
  const events: ProviderEvent[] = [];

  if (typeof body.eventType === 'string' && isObject(body.data)) {
    if (body.eventType === 'EngineFaultOn' || body.eventType === 'EngineFaultOff')
      normalizeEngineFault(collector, body.eventType, body, body.data);
    else if (Array.isArray(body.data.behaviorLabels))
      normalizeSafetyEvent(collector, events, body.data); // UNCONFIRMED: a safety event delivered by webhook
    else collector.skip(`webhook event ${body.eventType} carries no telematics`);
    return { ok: true, samples: collector.samples, events, skipped: collector.skipped };
  }
  if (typeof body.eventType === 'string') {
    collector.skip(`webhook event ${body.eventType} carries no telematics`);
    return { ok: true, samples: collector.samples, events, skipped: collector.skipped };
  }
  if (!Array.isArray(body.data)) return { ok: false, reason: 'expected {"data": [...]} or a webhook event' };

  for (const item of body.data) {
    if (!isObject(item)) collector.skip('data entry is not an object');
    else if (Array.isArray(item.behaviorLabels)) normalizeSafetyEvent(collector, events, item);
    else normalizeVehicleStats(collector, item);
  }
  const endCursor = isObject(body.pagination) ? body.pagination.endCursor : undefined;
  // An empty endCursor (the snapshot sends "") is no cursor.
  const cursor = typeof endCursor === 'string' && endCursor !== '' ? { nextCursor: endCursor } : {};
  return { ok: true, samples: collector.samples, events, skipped: collector.skipped, ...cursor };
}

export const samsara: ProviderAdapter = {
  id: 'samsara',
  normalize: (raw: RawPayload) => normalizeSamsara(raw),
  refresh: 'supported',
  push: {
    verify: verifySamsaraSignature,
    bodyProblem: jsonBodyProblem,
    replayKey: bodyReplayKey,
    tokenInPath: false,
    signatureHeaders: [signatureHeader],
  },
  connection: {
    problems: (config) => [
      ...pushOrPullCredentials(config),
      ...(config.webhook_secret && Buffer.from(config.webhook_secret, 'base64').length === 0
        ? [{ field: 'config.webhook_secret', message: 'must be the base64 secret Samsara shows' }]
        : []),
    ],
    defaultBaseUrl: 'https://api.samsara.com',
    pullsFeed: (config) => Boolean(config.api_token),
  },
};
