/**
 * Geotab pull client (research/providers.md §2.1): JSON-RPC over `POST {base_url}/apiv1`.
 *
 * Each pull authenticates first (`Authenticate{database, userName, password}` → `result.credentials`)
 * and then makes one call with those credentials:
 * - feed: `GetFeed{typeName: "StatusData", fromVersion: <cursor>, resultsLimit: 5000}`; the cursor is
 *   `result.toVersion` (Geotab keeps no position for us) and a full page (5000 records) means more is
 *   ready. Without a cursor `fromVersion` is omitted. Only StatusData (odometer, fuel, voltage,
 *   coolant, ignition, tires) is fed here; LogRecord and FaultData feeds, each with its own version
 *   cursor, are a possible extension (the adapter already normalizes both).
 * - one vehicle now: `Get{typeName: "StatusData", search: {deviceSearch: {id}, fromDate: now − 1 h}}`.
 *   One hour is enough for the diagnostics logged at ignition and about every 2 km (and every few
 *   minutes for voltage/fuel) while keeping the answer small; `Get` has no "latest per diagnostic".
 *
 * Rate limits: HTTP 429, or a JSON-RPC error naming `OverLimitException`, → rate limited with the
 * `Retry-After` header when present (else 60 s). Other JSON-RPC errors → failed.
 */
import { providerRequest, retryAfterMs } from './http.js';
import { geotabErrorText } from './geotab.js';
import type { Fetch, ProviderConfig, PullClient, PullOutcome } from './types.js';
import { isObject, parseJson } from './values.js';

const geotabFeedResultsLimit = 5000;
/** How far back `pullVehicle` asks for StatusData. */
const geotabVehicleLookbackMs = 60 * 60 * 1000;

type Failure = Exclude<PullOutcome, { ok: true }>;
type CallResult = { ok: true; body: string; contentType: string; result: unknown } | Failure;

async function call(config: ProviderConfig, method: string, params: Record<string, unknown>, fetchImpl: Fetch): Promise<CallResult> {
  // base_url is required when the connection is created (connection-config): Geotab has many servers.
  const url = `${(config.base_url ?? '').replace(/\/+$/, '')}/apiv1`;
  const response = await providerRequest(fetchImpl, url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ method, params }),
  });
  if (!response.ok) return response;
  const parsed = parseJson(response.body);
  if (!parsed.ok || !isObject(parsed.value)) return { ok: false, kind: 'failed', message: `geotab ${method} response is not a JSON object` };
  if (parsed.value.error !== undefined && parsed.value.error !== null) {
    const text = geotabErrorText(parsed.value.error);
    if (text.includes('OverLimitException')) return { ok: false, kind: 'rate_limited', retryAfterMs: retryAfterMs(response.headers.get('retry-after')) };
    return { ok: false, kind: 'failed', message: `geotab ${method} failed: ${text.slice(0, 200)}` };
  }
  return { ok: true, body: response.body, contentType: response.contentType, result: parsed.value.result };
}

async function authenticate(config: ProviderConfig, fetchImpl: Fetch): Promise<{ ok: true; credentials: Record<string, unknown> } | Failure> {
  if (!config.database || !config.username || !config.password) return { ok: false, kind: 'failed', message: 'geotab connection needs database, username and password' };
  const response = await call(config, 'Authenticate', { database: config.database, userName: config.username, password: config.password }, fetchImpl);
  if (!response.ok) return response;
  if (!isObject(response.result) || !isObject(response.result.credentials)) return { ok: false, kind: 'failed', message: 'geotab Authenticate returned no credentials' };
  return { ok: true, credentials: response.result.credentials };
}

export const geotabClient: PullClient = {
  async pullFeed(config, cursor, fetchImpl) {
    const auth = await authenticate(config, fetchImpl);
    if (!auth.ok) return auth;
    const params: Record<string, unknown> = { typeName: 'StatusData', resultsLimit: geotabFeedResultsLimit, credentials: auth.credentials };
    if (cursor !== null) params.fromVersion = cursor;
    const response = await call(config, 'GetFeed', params, fetchImpl);
    if (!response.ok) return response;
    const { result } = response;
    if (!isObject(result) || !Array.isArray(result.data) || typeof result.toVersion !== 'string' || result.toVersion === '') {
      return { ok: false, kind: 'failed', message: 'geotab GetFeed result has no data and toVersion' };
    }
    return {
      ok: true,
      page: { body: response.body, contentType: response.contentType, nextCursor: result.toVersion, hasMore: result.data.length >= geotabFeedResultsLimit },
    };
  },

  async pullVehicle(config, providerVehicleId, fetchImpl) {
    const auth = await authenticate(config, fetchImpl);
    if (!auth.ok) return auth;
    const fromDate = new Date(Date.now() - geotabVehicleLookbackMs).toISOString();
    const search = { deviceSearch: { id: providerVehicleId }, fromDate };
    const response = await call(config, 'Get', { typeName: 'StatusData', search, credentials: auth.credentials }, fetchImpl);
    if (!response.ok) return response;
    if (!Array.isArray(response.result)) return { ok: false, kind: 'failed', message: 'geotab Get result is not a list' };
    // A Get is not part of the feed: it carries no cursor.
    return { ok: true, page: { body: response.body, contentType: response.contentType, nextCursor: null, hasMore: false } };
  },
};
