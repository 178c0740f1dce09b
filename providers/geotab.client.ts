/**
 * Geotab pull client (docs/providers/geotab.md): JSON-RPC over `POST {base_url}/apiv1`.
 *
 * Session: `Authenticate{database, userName, password}` → `result.credentials` (and `result.path`,
 * the server to use from then on when it is not "ThisServer"). The session is kept in the pull
 * context's session cache, so a pull authenticates once and later pulls reuse it; a call refused
 * with `InvalidUserException` (the session expired or was revoked) authenticates again and is
 * repeated once.
 *
 * Feed: one `GetFeed{typeName, fromVersion, resultsLimit: 5000}` per entity type, each with its own
 * version cursor (`result.toVersion`; Geotab keeps no position for us), taking turns behind the
 * connection's one cursor (providers/feeds.ts): StatusData (odometer, fuel, voltage, coolant,
 * ignition, tires), LogRecord (location and speed), FaultData (fault codes) and ExceptionEvent
 * (harsh braking, acceleration, cornering and accidents, for monitoring). A type's first call
 * seeds it with `search.fromDate` an hour back instead of the whole history. A full page
 * (5000 records) means more is ready.
 *
 * One vehicle now: `ExecuteMultiCall` of `Get` StatusData, LogRecord and FaultData of the device
 * for the last hour, in one request; its result is the three lists. One hour covers the
 * diagnostics logged at ignition and about every 2 km (and every few minutes for voltage/fuel)
 * while keeping the answer small; `Get` has no "latest per diagnostic".
 *
 * Rate limits: HTTP 429, or a JSON-RPC error naming `OverLimitException`, → rate limited with the
 * `Retry-After` header when present (else 60 s). Other JSON-RPC errors → failed.
 */
import { createHash } from 'node:crypto';
import { advanceRotation, readRotation } from './feeds.js';
import { geotabErrorText } from './geotab.js';
import { endpoint, providerRequest, retryAfterMs, type Failure } from './http.js';
import type { ProviderConfig, PullClient, PullContext, PullOutcome } from './types.js';
import { isObject, parseJson } from './values.js';

export const geotabFeeds = ['StatusData', 'LogRecord', 'FaultData', 'ExceptionEvent'] as const;
const geotabFeedResultsLimit = 5000;
/** How far back a type's first GetFeed and a vehicle pull look. */
const geotabLookbackMs = 60 * 60 * 1000;

interface Session {
  apiUrl: string;
  credentials: Record<string, unknown>;
}

type Called = { ok: true; body: string; contentType: string; result: unknown };
/** A JSON-RPC error answer, before it becomes an outcome (InvalidUserException is retried first). */
type RpcError = { ok: false; kind: 'rpc_error'; text: string; retryAfter: string | undefined };

async function call(
  apiUrl: string,
  method: string,
  params: Record<string, unknown>,
  context: PullContext,
): Promise<Called | RpcError | Failure> {
  const response = await providerRequest(context.http, {
    url: apiUrl,
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ method, params }),
  });
  if (!response.ok) return response;
  const parsed = parseJson(response.body);
  if (!parsed.ok || !isObject(parsed.value))
    return { ok: false, kind: 'failed', message: `geotab ${method} response is not a JSON object` };
  if (parsed.value.error !== undefined && parsed.value.error !== null)
    return {
      ok: false,
      kind: 'rpc_error',
      text: geotabErrorText(parsed.value.error),
      retryAfter: response.headers['retry-after'],
    };
  return { ok: true, body: response.body, contentType: response.contentType, result: parsed.value.result };
}

function outcomeOf(method: string, error: RpcError | Failure): Failure {
  if (error.kind !== 'rpc_error') return error;
  if (error.text.includes('OverLimitException'))
    return { ok: false, kind: 'rate_limited', retryAfterMs: retryAfterMs(error.retryAfter) };
  return { ok: false, kind: 'failed', message: `geotab ${method} failed: ${error.text.slice(0, 200)}` };
}

/** One session per server, database and login; the password is part of the key only as a digest. */
function sessionKey(config: ProviderConfig): string {
  const login = [config.base_url, config.database, config.username, config.password].join('\n');
  return `geotab:${createHash('sha256').update(login).digest('hex')}`;
}

/** A server name Authenticate may send as `path` (a host, nothing else). */
const serverName = /^[A-Za-z0-9.-]{1,253}$/;

async function authenticate(
  config: ProviderConfig,
  context: PullContext,
): Promise<{ ok: true; session: Session } | Failure> {
  if (!config.base_url || !config.database || !config.username || !config.password)
    return { ok: false, kind: 'failed', message: 'geotab connection needs database, username and password' };
  const apiUrl = endpoint(config.base_url, '/apiv1');
  const response = await call(
    apiUrl,
    'Authenticate',
    { database: config.database, userName: config.username, password: config.password },
    context,
  );
  if (!response.ok) return outcomeOf('Authenticate', response);
  if (!isObject(response.result) || !isObject(response.result.credentials))
    return { ok: false, kind: 'failed', message: 'geotab Authenticate returned no credentials' };
  const path = response.result.path;
  // The database lives on another server: every later call goes there, over https.
  const moved = typeof path === 'string' && path !== 'ThisServer' && serverName.test(path);
  return {
    ok: true,
    session: { apiUrl: moved ? `https://${path}/apiv1` : apiUrl, credentials: response.result.credentials },
  };
}

function cachedSession(value: unknown): Session | null {
  return isObject(value) && typeof value.apiUrl === 'string' && isObject(value.credentials)
    ? { apiUrl: value.apiUrl, credentials: value.credentials }
    : null;
}

/** `method` with the session's credentials; a refused session is replaced once. */
async function callWithSession(
  config: ProviderConfig,
  method: string,
  params: Record<string, unknown>,
  context: PullContext,
): Promise<Called | Failure> {
  const key = sessionKey(config);
  let session = cachedSession(context.sessions.get(key));
  let reused = session !== null;
  for (;;) {
    if (!session) {
      const fresh = await authenticate(config, context);
      if (!fresh.ok) return fresh;
      session = fresh.session;
      context.sessions.set(key, session);
    }
    const response = await call(session.apiUrl, method, { ...params, credentials: session.credentials }, context);
    if (response.ok) return response;
    if (!(reused && response.kind === 'rpc_error' && response.text.includes('InvalidUserException')))
      return outcomeOf(method, response);
    context.sessions.delete(key);
    session = null;
    reused = false;
  }
}

export const geotabClient: PullClient = {
  async pullFeed(config, cursor, context): Promise<PullOutcome> {
    const rotation = readRotation(cursor, geotabFeeds);
    const params: Record<string, unknown> = { typeName: rotation.feed, resultsLimit: geotabFeedResultsLimit };
    if (typeof rotation.position === 'string') params.fromVersion = rotation.position;
    else params.search = { fromDate: new Date(context.now.getTime() - geotabLookbackMs).toISOString() };
    const response = await callWithSession(config, 'GetFeed', params, context);
    if (!response.ok) return response;
    const { result } = response;
    if (
      !isObject(result) ||
      !Array.isArray(result.data) ||
      typeof result.toVersion !== 'string' ||
      result.toVersion === ''
    ) {
      return { ok: false, kind: 'failed', message: 'geotab GetFeed result has no data and toVersion' };
    }
    const full = result.data.length >= geotabFeedResultsLimit;
    const { nextCursor, hasMore } = advanceRotation(rotation, geotabFeeds, result.toVersion, full);
    return { ok: true, page: { body: response.body, contentType: response.contentType, nextCursor, hasMore } };
  },

  async pullVehicle(config, providerVehicleId, context) {
    const search = {
      deviceSearch: { id: providerVehicleId },
      fromDate: new Date(context.now.getTime() - geotabLookbackMs).toISOString(),
    };
    const calls = ['StatusData', 'LogRecord', 'FaultData'].map((typeName) => ({
      method: 'Get',
      params: { typeName, search },
    }));
    const response = await callWithSession(config, 'ExecuteMultiCall', { calls }, context);
    if (!response.ok) return response;
    if (!Array.isArray(response.result) || !response.result.every(Array.isArray))
      return { ok: false, kind: 'failed', message: 'geotab ExecuteMultiCall result is not a list of lists' };
    // A Get is not part of the feed: it carries no cursor.
    return {
      ok: true,
      page: { body: response.body, contentType: response.contentType, nextCursor: null, hasMore: false },
    };
  },
};
