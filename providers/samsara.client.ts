/**
 * Samsara pull client (docs/providers/samsara.md). Auth: `Authorization: Bearer <api_token>`.
 * 429 → rate limited with the (possibly fractional) `Retry-After` seconds (providerRequest).
 *
 * Feed: Samsara allows at most 3 `types` per request and a stats feed cursor belongs to its type
 * list, so the stat types the health and monitoring rules use are pulled as three feeds, each
 * with its own `endCursor` (`GET {base_url}/fleet/vehicles/stats/feed?types=...&after=<cursor>`;
 * the first call without `after` returns the last known values; `hasNextPage` says whether more is
 * ready now), plus the harsh events, which have no feed: `GET {base_url}/fleet/safety-events
 * ?startTime&endTime&after` over time windows. The four take turns behind the connection's one
 * cursor (providers/feeds.ts):
 * - distance: `obdOdometerMeters`, `gpsOdometerMeters` (request both: which one a vehicle has
 *   depends on its OBD coverage), `fuelPercents`;
 * - motion: `gps` (location and speed; ECU speed when `isEcuSpeed`), `engineStates`, `batteryMilliVolts`;
 * - engine: `engineCoolantTemperatureMilliC`, `faultCodes`, `obdEngineSeconds`;
 * - safety: safety events (harsh braking, acceleration, turns, crashes), windows overlapping by
 *   10 minutes because Samsara publishes an event after it happened (events are stored once).
 *
 * One vehicle now: the snapshot `GET {base_url}/fleet/vehicles/stats?types=...&vehicleIds=<id>`,
 * once per stat group; the stored page is the three answers' `data` lists in one `{"data": [...]}`.
 */
import { advanceRotation, currentWindow, readRotation } from './feeds.js';
import { endpoint, providerRequest, type Failure } from './http.js';
import type { ProviderConfig, PullClient, PullContext, PullOutcome } from './types.js';
import { isObject, parseJson } from './values.js';

export const samsaraStatGroups = {
  distance: ['obdOdometerMeters', 'gpsOdometerMeters', 'fuelPercents'],
  motion: ['gps', 'engineStates', 'batteryMilliVolts'],
  engine: ['engineCoolantTemperatureMilliC', 'faultCodes', 'obdEngineSeconds'],
} as const;
type StatGroup = keyof typeof samsaraStatGroups;

/** The feeds in pulling order; `distance` first, where a cursor stored before the others existed belongs. */
export const samsaraFeeds = ['distance', 'motion', 'engine', 'safety'] as const;

const safetyWindow = { firstLookbackMs: 60 * 60_000, overlapMs: 10 * 60_000 };

type Answer = { ok: true; body: string; contentType: string; data: unknown[]; pagination: Record<string, unknown> };

async function get(config: ProviderConfig, pathAndQuery: string, context: PullContext): Promise<Answer | Failure> {
  if (!config.api_token) return { ok: false, kind: 'failed', message: 'samsara connection has no api_token' };
  // Set to https://api.samsara.com when the connection is created with a token (connection rules).
  if (!config.base_url) return { ok: false, kind: 'failed', message: 'samsara connection has no base_url' };
  const response = await providerRequest(context.http, {
    url: endpoint(config.base_url, pathAndQuery),
    method: 'GET',
    headers: { authorization: `Bearer ${config.api_token}`, accept: 'application/json' },
  });
  if (!response.ok) return response;
  const parsed = parseJson(response.body);
  if (!parsed.ok || !isObject(parsed.value) || !Array.isArray(parsed.value.data))
    return { ok: false, kind: 'failed', message: 'samsara response is not {"data": [...]}' };
  const pagination = isObject(parsed.value.pagination) ? parsed.value.pagination : {};
  return { ok: true, body: response.body, contentType: response.contentType, data: parsed.value.data, pagination };
}

/** A page's `endCursor` when it has one (the snapshot sends ""). */
function endCursorOf(pagination: Record<string, unknown>): string | null {
  return typeof pagination.endCursor === 'string' && pagination.endCursor !== '' ? pagination.endCursor : null;
}

async function pullStats(
  config: ProviderConfig,
  group: StatGroup,
  cursor: string | null,
  context: PullContext,
): Promise<{ ok: true; answer: Answer; position: string | null; more: boolean } | Failure> {
  const after = cursor === null ? '' : `&after=${encodeURIComponent(cursor)}`;
  const answer = await get(
    config,
    `/fleet/vehicles/stats/feed?types=${samsaraStatGroups[group].join(',')}${after}`,
    context,
  );
  if (!answer.ok) return answer;
  // A page without an endCursor keeps the cursor it was fetched with, so nothing is skipped.
  return {
    ok: true,
    answer,
    position: endCursorOf(answer.pagination) ?? cursor,
    more: answer.pagination.hasNextPage === true,
  };
}

async function pullSafetyEvents(
  config: ProviderConfig,
  position: unknown,
  context: PullContext,
): Promise<{ ok: true; answer: Answer; position: unknown; more: boolean } | Failure> {
  const window = currentWindow(position, context.now, safetyWindow);
  const after = window.page === null ? '' : `&after=${encodeURIComponent(window.page)}`;
  const query = `startTime=${encodeURIComponent(window.since)}&endTime=${encodeURIComponent(window.until)}${after}`;
  const answer = await get(config, `/fleet/safety-events?${query}`, context);
  if (!answer.ok) return answer;
  const next = answer.pagination.hasNextPage === true ? endCursorOf(answer.pagination) : null;
  return { ok: true, answer, position: { since: window.since, until: window.until, page: next }, more: next !== null };
}

export const samsaraClient: PullClient = {
  async pullFeed(config, cursor, context): Promise<PullOutcome> {
    const rotation = readRotation(cursor, samsaraFeeds);
    const pulled =
      rotation.feed === 'safety'
        ? await pullSafetyEvents(config, rotation.position, context)
        : await pullStats(
            config,
            rotation.feed as StatGroup,
            typeof rotation.position === 'string' ? rotation.position : null,
            context,
          );
    if (!pulled.ok) return pulled;
    const { nextCursor, hasMore } = advanceRotation(rotation, samsaraFeeds, pulled.position, pulled.more);
    return {
      ok: true,
      page: { body: pulled.answer.body, contentType: pulled.answer.contentType, nextCursor, hasMore },
    };
  },

  async pullVehicle(config, providerVehicleId, context) {
    const data: unknown[] = [];
    for (const types of Object.values(samsaraStatGroups)) {
      const answer = await get(
        config,
        `/fleet/vehicles/stats?types=${types.join(',')}&vehicleIds=${encodeURIComponent(providerVehicleId)}`,
        context,
      );
      if (!answer.ok) return answer;
      for (const item of answer.data) data.push(item);
    }
    // The snapshot's endCursor pages the vehicle list, not the feed: it is never a feed cursor.
    return {
      ok: true,
      page: { body: JSON.stringify({ data }), contentType: 'application/json', nextCursor: null, hasMore: false },
    };
  },
};
