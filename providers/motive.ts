/**
 * Motive (formerly KeepTruckin) adapter: docs/providers/motive.md.
 *
 * `normalize` accepts these bodies (each stored as-is in the inbox):
 *
 * 1. The `GET /v1/vehicle_locations` list (pulled by motive.client.ts):
 *      {"vehicles": [{"vehicle": {"id", "number", "vin", "metric_units", "current_location": {...}}}],
 *       "pagination": {"per_page", "page_no", "total"}}
 *    and a single `{"vehicle": {...}}`. The `current_location` field names are 3rd-party:
 *    `located_at, lat, lon, bearing, speed, odometer, true_odometer, engine_hours,
 *    true_engine_hours, fuel_primary_remaining_percentage, battery_voltage, ...`.
 * 2. The wrapper motive.client.ts stores for `GET /v3/vehicle_locations/{id}` (refresh):
 *      {"motive_vehicle_id": "<id>", "response": <the raw v3 JSON>}
 *    The notes give the v3 URL and its odometer/engine-hours rules but NOT its response shape
 *    [UNCONFIRMED], so the wrapper carries the id and `response` is read defensively: an array of
 *    location records, `{"vehicle_locations": [...]}` whose entries are location records or
 *    `{"vehicle_location": {...}}`, or `{"vehicle": {current_location}}`. A location record uses
 *    the same field names as `current_location`.
 * 3. The `GET /v1/fault_codes` list (motive.client.ts, Motive's developer guide):
 *      {"fault_codes": [{"fault_code": {"code", "status", "first_observed_at", "last_observed_at",
 *       "fmi", "network", "vehicle": {"id"}, ...}}], "pagination": {...}}
 *    and the `GET /v1/driver_performance_events` list below.
 * 4. Company webhooks. The event type is read from `action`. Body shapes are
 *    [UNCONFIRMED]; Motive's documentation only names the event types, so these are assumed:
 *    - `vehicle_location_updated`: `{"action", "vehicle": {"id", "metric_units", "current_location": {...}}}`,
 *      or flat `{"action", "vehicle_id", "located_at", "lat", "lon", ...}` (a `current_location`
 *      object beside `vehicle_id` is also read).
 *    - `fault_code_opened` / `fault_code_closed`: `{"action", "fault_code": {"code", "code_label",
 *      "status", "fmi", "first_observed_at", "last_observed_at", "vehicle": {"id"} | "vehicle_id"}}`
 *      or the same fields flat. Field names follow `GET /v1/fault_codes`.
 *    - `driver_performance_event*`: `{"action", "driver_performance_event": {"type", "start_time",
 *      "vehicle": {"id"} | "vehicle_id"}}` or flat; also the list `{"driver_performance_events":
 *      [{"driver_performance_event": {...}}]}`. `type` hard_accel|hard_brake|hard_corner|crash.
 *
 * Units [UNCONFIRMED]: `vehicle.metric_units` false (Motive's default, and ours when the flag
 * is absent) means odometer in miles and speed in mph; true means km and km/h.
 * `true_odometer` (bulk-upload corrected, the v3 doc's recommendation) wins over the gateway's
 * virtual `odometer`; likewise `true_engine_hours` over `engine_hours`. Both are ECU-side values,
 * so they map to `odometer_km`, never `gps_odometer_km`. Null fields are skipped silently.
 *
 * Push signature: `X-KT-Webhook-Signature` = hex HMAC-SHA1(shared secret, raw body), no timestamp.
 */
import { kmPerMile } from '../src/domain/units.js';
import type { ProviderEvent, ProviderEventKind } from '../src/domain/sample.js';
import { pushOrPullCredentials } from './connection.js';
import { bodyReplayKey, jsonBodyProblem } from './push.js';
import { header, hexEquals, hmacHex } from './signing.js';
import type { NormalizeResult, ProviderAdapter, PushRequest, RawPayload, VerifyResult } from './types.js';
import { SampleCollector, finiteNumber, isObject, parseJson, parseTime, scaled } from './values.js';

/** Page size the client asks for; Motive does not document a maximum. */
export const motivePerPage = 100;

/** driver_performance_event.type → our event kind; other types are skipped with a reason. */
const eventKinds = new Map<string, ProviderEventKind>([
  ['hard_accel', 'hard_accel'],
  ['hard_brake', 'hard_brake'],
  ['hard_corner', 'hard_corner'],
  ['crash', 'impact'],
]);

const signatureHeader = 'x-kt-webhook-signature';

export function verifyMotiveSignature(request: PushRequest, secret: string): VerifyResult {
  const given = header(request.headers, signatureHeader);
  if (!given) return { ok: false, reason: 'missing_signature' };
  const signature = given.trim();
  // An empty secret would make the HMAC forgeable by anyone: never accept it.
  if (!secret || !/^[0-9a-fA-F]{40}$/.test(signature)) return { ok: false, reason: 'bad_signature' };
  return hexEquals(signature, hmacHex('sha1', secret, request.rawBody))
    ? { ok: true }
    : { ok: false, reason: 'bad_signature' };
}

/**
 * The cursor after a `/v1/vehicle_locations` page: the next page number while
 * `page_no * per_page < total`, else null (start over at page 1 on the next poll).
 * The client passes the page it asked for, so the cursor always advances even if a response
 * echoed another `page_no`; without it the response's `page_no` is used. `per_page` is the
 * response's (Motive may cap it), else the 100 we ask for.
 */
export function motiveNextPage(pagination: unknown, requestedPage?: number): string | null {
  if (!isObject(pagination)) return null;
  const total = finiteNumber(pagination.total);
  const perPage = finiteNumber(pagination.per_page) ?? motivePerPage;
  const pageNo = requestedPage ?? finiteNumber(pagination.page_no) ?? 1;
  if (total === null || perPage <= 0 || !Number.isInteger(pageNo) || pageNo < 1) return null;
  return pageNo * perPage < total ? String(pageNo + 1) : null;
}

function idOf(value: unknown): string {
  if (typeof value === 'string') return value.trim();
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return '';
}

/** The first boolean `metric_units` found; false (miles, mph) is Motive's default. */
function metricUnits(...candidates: unknown[]): boolean {
  for (const candidate of candidates) if (typeof candidate === 'boolean') return candidate;
  return false;
}

function present(value: unknown): unknown {
  return value === null ? undefined : value;
}

/** One Motive location record (`current_location` or a v3 history entry) of one vehicle. */
function addLocation(
  collector: SampleCollector,
  vehicleId: string,
  location: Record<string, unknown>,
  metric: boolean,
): void {
  const at = parseTime(location.located_at);
  if (!at) {
    collector.skip(`vehicle ${vehicleId} location without a valid located_at`);
    return;
  }
  // metric_units false: odometer in miles and speed in mph → ×1.609344; true: already km and km/h.
  const factor = metric ? 1 : kmPerMile;
  collector.add(vehicleId, 'odometer_km', at, scaled(location.true_odometer ?? location.odometer, factor));
  // Engine hours are hours in both unit systems.
  collector.add(vehicleId, 'engine_hours', at, present(location.true_engine_hours ?? location.engine_hours));
  // Percent 0–100; `fuel` is cumulative consumption, not a level, and is not used.
  collector.add(vehicleId, 'fuel_percent', at, present(location.fuel_primary_remaining_percentage));
  // Volts.
  collector.add(vehicleId, 'battery_voltage', at, present(location.battery_voltage));
  collector.add(vehicleId, 'speed_kph', at, scaled(location.speed, factor));
  if (present(location.lat) !== undefined || present(location.lon) !== undefined) {
    collector.add(vehicleId, 'location', at, {
      lat: location.lat,
      lon: location.lon,
      heading: finiteNumber(location.bearing),
      address: location.description,
    });
  }
}

/** A `{id, metric_units, current_location}` vehicle object; `vehicleId` overrides `vehicle.id`. */
function addVehicle(collector: SampleCollector, vehicle: unknown, vehicleId?: string): void {
  if (!isObject(vehicle)) {
    collector.skip('vehicle is not an object');
    return;
  }
  const id = vehicleId ?? idOf(vehicle.id);
  if (!id) {
    collector.skip('vehicle without id');
    return;
  }
  const location = vehicle.current_location;
  if (!isObject(location)) {
    collector.skip(`vehicle ${id} has no current_location`);
    return;
  }
  addLocation(collector, id, location, metricUnits(vehicle.metric_units));
}

/** The v3 history wrapper written by motive.client.ts (shape of `response` UNCONFIRMED, see top). */
function addHistory(collector: SampleCollector, body: Record<string, unknown>): NormalizeResult | null {
  const id = idOf(body.motive_vehicle_id);
  if (!id) return { ok: false, reason: 'motive_vehicle_id is missing' };
  const response = body.response;
  const entries = Array.isArray(response)
    ? response
    : isObject(response) && Array.isArray(response.vehicle_locations)
      ? response.vehicle_locations
      : null;
  if (entries === null) {
    if (isObject(response) && isObject(response.vehicle)) {
      addVehicle(collector, response.vehicle, id);
      return null;
    }
    return { ok: false, reason: 'v3 response has no vehicle_locations list' };
  }
  const responseMetric = isObject(response) ? response.metric_units : undefined;
  for (const entry of entries) {
    const location = isObject(entry) && isObject(entry.vehicle_location) ? entry.vehicle_location : entry;
    if (!isObject(location)) {
      collector.skip(`vehicle ${id} history entry is not an object`);
      continue;
    }
    const vehicle = isObject(location.vehicle)
      ? location.vehicle
      : isObject(entry) && isObject(entry.vehicle)
        ? entry.vehicle
        : {};
    addLocation(
      collector,
      id,
      location,
      metricUnits(location.metric_units, vehicle.metric_units, responseMetric, body.metric_units),
    );
  }
  return null;
}

/** `vehicle_location_updated` webhook (shape UNCONFIRMED, see top). */
function addLocationWebhook(collector: SampleCollector, body: Record<string, unknown>): void {
  const vehicle = isObject(body.vehicle) ? body.vehicle : null;
  if (vehicle && vehicle.current_location !== undefined) {
    addVehicle(collector, vehicle);
    return;
  }
  const id = idOf(vehicle ? vehicle.id : body.vehicle_id);
  if (!id) {
    collector.skip('vehicle_location_updated without vehicle id');
    return;
  }
  const location = isObject(body.current_location) ? body.current_location : body;
  addLocation(collector, id, location, metricUnits(vehicle?.metric_units, location.metric_units, body.metric_units));
}

/**
 * Motive's fault `code`: an OBD-II code as it is, or a J1939 SPN number which, with its `fmi`, is
 * written `SPN<n>-FMI<n>` like every other adapter (assumption: Motive's J1939 `code` is the SPN).
 */
function faultCode(fault: Record<string, unknown>): string {
  const code = idOf(fault.code).toUpperCase();
  const fmi = finiteNumber(fault.fmi);
  return /^\d+$/.test(code) && fmi !== null && Number.isInteger(fmi) ? `SPN${code}-FMI${fmi}` : code;
}

/**
 * `fault_code_opened` / `fault_code_closed` (shape UNCONFIRMED, see top). An opened fault becomes a
 * `dtcs` sample holding that one code at `last_observed_at` (else `first_observed_at`). A closed
 * fault is skipped with a reason: one event does not say which other codes are still active, and
 * an empty `dtcs` would wrongly clear them.
 */
function addFault(collector: SampleCollector, body: Record<string, unknown>, action: string): void {
  const fault = isObject(body.fault_code) ? body.fault_code : body;
  const id =
    idOf(isObject(fault.vehicle) ? fault.vehicle.id : fault.vehicle_id) ||
    idOf(isObject(body.vehicle) ? body.vehicle.id : body.vehicle_id);
  const code = faultCode(fault);
  if (!id || !code) {
    collector.skip(`${action} without vehicle id or code`);
    return;
  }
  if (action === 'fault_code_closed' || fault.status === 'closed') {
    collector.skip(`fault ${code} of vehicle ${id} closed: a closed fault does not list the codes still active`);
    return;
  }
  collector.add(id, 'dtcs', parseTime(fault.last_observed_at) ?? parseTime(fault.first_observed_at), [{ code }]);
}

/**
 * The `GET /v1/fault_codes` list: per vehicle, its open codes on this page become one `dtcs`
 * sample at the latest `last_observed_at` among them. Closed codes are skipped, as in the webhook:
 * they do not say which codes are still active. A vehicle whose codes are spread over two pages
 * gets one sample per page.
 */
function addFaultList(collector: SampleCollector, entries: unknown[]): void {
  const open = new Map<string, { codes: string[]; at: Date | null }>();
  for (const entry of entries) {
    const fault = isObject(entry) && isObject(entry.fault_code) ? entry.fault_code : entry;
    if (!isObject(fault)) {
      collector.skip('fault_codes entry is not an object');
      continue;
    }
    const id = idOf(isObject(fault.vehicle) ? fault.vehicle.id : fault.vehicle_id);
    const code = faultCode(fault);
    if (!id || !code) collector.skip('fault code without vehicle id or code');
    else if (fault.status === 'closed') collector.skip(`fault ${code} of vehicle ${id} closed`);
    else {
      const seen = open.get(id) ?? { codes: [], at: null };
      const at = parseTime(fault.last_observed_at) ?? parseTime(fault.first_observed_at);
      seen.codes.push(code);
      if (at && (!seen.at || at > seen.at)) seen.at = at;
      open.set(id, seen);
    }
  }
  for (const [id, { codes, at }] of open)
    collector.add(
      id,
      'dtcs',
      at,
      codes.map((code) => ({ code })),
    );
}

/** One driver performance event (shape UNCONFIRMED, see top); g is not given by Motive. */
function addPerformanceEvent(collector: SampleCollector, events: ProviderEvent[], raw: unknown): void {
  const event = isObject(raw) && isObject(raw.driver_performance_event) ? raw.driver_performance_event : raw;
  if (!isObject(event)) {
    collector.skip('driver_performance_event is not an object');
    return;
  }
  const type = String(event.type);
  const id = idOf(isObject(event.vehicle) ? event.vehicle.id : event.vehicle_id);
  const kind = eventKinds.get(type);
  const at = parseTime(event.start_time);
  if (!kind) collector.skip(`driver_performance_event ${type} not mapped`);
  else if (!id) collector.skip(`driver_performance_event ${type} without vehicle id`);
  else if (!at) collector.skip(`driver_performance_event ${type} without a valid start_time`);
  else events.push({ providerVehicleId: id, kind, recordedAt: at, g: null });
}

export function normalizeMotive(raw: RawPayload): NormalizeResult {
  const parsed = parseJson(raw.body);
  if (!parsed.ok) return { ok: false, reason: 'body is not JSON' };
  const body = parsed.value;
  if (!isObject(body))
    return { ok: false, reason: 'expected a Motive vehicle_locations list, vehicle or webhook object' };
  const collector = new SampleCollector();
  const events: ProviderEvent[] = [];
  const done = (nextCursor?: string | null): NormalizeResult => ({
    ok: true,
    samples: collector.samples,
    events,
    skipped: collector.skipped,
    ...(nextCursor === undefined ? {} : { nextCursor }),
  });

  if ('motive_vehicle_id' in body) return addHistory(collector, body) ?? done();

  if (Array.isArray(body.vehicles)) {
    for (const entry of body.vehicles) {
      if (!isObject(entry) || !isObject(entry.vehicle)) collector.skip('vehicles entry without vehicle');
      else addVehicle(collector, entry.vehicle);
    }
    return done(isObject(body.pagination) ? motiveNextPage(body.pagination) : undefined);
  }

  if (typeof body.action === 'string') {
    const action = body.action;
    if (action === 'vehicle_location_updated') addLocationWebhook(collector, body);
    else if (action === 'fault_code_opened' || action === 'fault_code_closed') addFault(collector, body, action);
    else if (action.startsWith('driver_performance_event')) addPerformanceEvent(collector, events, body);
    else collector.skip(`webhook action ${action} not handled`);
    return done();
  }

  if (Array.isArray(body.fault_codes)) {
    addFaultList(collector, body.fault_codes);
    return done();
  }

  if (isObject(body.vehicle)) {
    addVehicle(collector, body.vehicle);
    return done();
  }
  if (isObject(body.driver_performance_event) || Array.isArray(body.driver_performance_events)) {
    const list = Array.isArray(body.driver_performance_events) ? body.driver_performance_events : [body];
    for (const entry of list) addPerformanceEvent(collector, events, entry);
    return done();
  }
  return { ok: false, reason: 'expected a Motive vehicle_locations list, vehicle or webhook object' };
}

export const motive: ProviderAdapter = {
  id: 'motive',
  normalize: (raw: RawPayload) => normalizeMotive(raw),
  refresh: 'supported',
  // The signature covers the body only, with no time in it: a replay is caught as a repeated body.
  push: {
    verify: (request, secret) => verifyMotiveSignature(request, secret),
    bodyProblem: jsonBodyProblem,
    replayKey: bodyReplayKey,
    tokenInPath: false,
    signatureHeaders: [signatureHeader],
  },
  connection: {
    problems: pushOrPullCredentials,
    defaultBaseUrl: 'https://api.gomotive.com',
    pullsFeed: (config) => Boolean(config.api_token),
  },
};
