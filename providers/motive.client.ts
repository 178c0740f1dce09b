/**
 * Motive pulls (docs/providers/motive.md), authenticated with `X-Api-Key: <api_token>`.
 *
 * pullFeed: Motive has no change feed, so three lists take turns behind the connection's one
 * cursor (providers/feeds.ts), each paged with `per_page=100&page_no=<n>` while
 * `page_no * per_page < pagination.total`:
 * - locations: `GET /v1/vehicle_locations`, the current location, odometer, engine hours, fuel and
 *   battery of every vehicle, swept from page 1 each round;
 * - faults: `GET /v1/fault_codes`, the fault codes of every vehicle (open and closed), swept the same way;
 * - events: `GET /v1/driver_performance_events?start_time&end_time` (harsh braking, acceleration,
 *   cornering, crashes), over time windows overlapping by 10 minutes, because Motive publishes an
 *   event after it happened (events are stored once). The query names are [UNCONFIRMED].
 * Each body is stored as-is.
 *
 * pullVehicle (refresh): `GET /v3/vehicle_locations/<id>?start_date=<yesterday>&end_date=<today>`
 * (dates YYYY-MM-DD in UTC: Motive's times are UTC unless `X-Time-Zone` is sent; the range
 * is far inside the 3-month limit). The v3 response shape is not documented [UNCONFIRMED] and
 * may not name the vehicle, so the stored body is the wrapper
 * `{"motive_vehicle_id": "<id>", "response": <raw JSON>}` that motive.ts normalizes.
 */
import { advanceRotation, currentWindow, readRotation } from './feeds.js';
import { endpoint, providerRequest, type Failure } from './http.js';
import { motiveNextPage, motivePerPage } from './motive.js';
import type { ProviderConfig, PullClient, PullContext, PullOutcome } from './types.js';
import { isObject, parseJson } from './values.js';

export const motiveFeeds = ['locations', 'faults', 'events'] as const;

const motiveLists = { locations: '/v1/vehicle_locations', faults: '/v1/fault_codes' } as const;
const eventsWindow = { firstLookbackMs: 60 * 60_000, overlapMs: 10 * 60_000 };

function settings(config: ProviderConfig): { baseUrl: string; apiToken: string } | null {
  if (!config.base_url || !config.api_token) return null;
  return { baseUrl: config.base_url, apiToken: config.api_token };
}

const notConfigured: Failure = { ok: false, kind: 'failed', message: 'motive connection needs base_url and api_token' };

/** The page a position points at: a positive integer, else page 1 (a garbled cursor restarts the sweep). */
function pageOf(position: unknown): number {
  const page = typeof position === 'string' ? Number(position) : NaN;
  return Number.isInteger(page) && page >= 1 ? page : 1;
}

/** YYYY-MM-DD of `date` in UTC. */
function utcDate(date: Date): string {
  return date.toISOString().slice(0, 10);
}

async function getJson(
  config: ProviderConfig,
  pathAndQuery: string,
  context: PullContext,
): Promise<{ ok: true; body: string; contentType: string; value: unknown } | Failure> {
  const motive = settings(config);
  if (!motive) return notConfigured;
  const response = await providerRequest(context.http, {
    url: endpoint(motive.baseUrl, pathAndQuery),
    method: 'GET',
    headers: { 'X-Api-Key': motive.apiToken, Accept: 'application/json' },
  });
  if (!response.ok) return response;
  const parsed = parseJson(response.body);
  if (!parsed.ok)
    return {
      ok: false,
      kind: 'failed',
      message: `motive ${pathAndQuery.split('?')[0]} returned a body that is not JSON`,
    };
  return { ok: true, body: response.body, contentType: response.contentType, value: parsed.value };
}

/** One page of a list; the next page's number while there are more, else null (the sweep starts over). */
async function pullPage(
  config: ProviderConfig,
  path: string,
  query: string,
  page: number,
  context: PullContext,
): Promise<{ ok: true; body: string; contentType: string; nextPage: string | null } | Failure> {
  const answer = await getJson(config, `${path}?${query}per_page=${motivePerPage}&page_no=${page}`, context);
  if (!answer.ok) return answer;
  if (!isObject(answer.value))
    return { ok: false, kind: 'failed', message: `motive ${path} returned a body that is not a JSON object` };
  // Without a pagination block there is no way to know about more pages: this one is the last.
  return {
    ok: true,
    body: answer.body,
    contentType: answer.contentType,
    nextPage: motiveNextPage(answer.value.pagination, page),
  };
}

export async function pullMotiveFeed(
  config: ProviderConfig,
  cursor: string | null,
  context: PullContext,
): Promise<PullOutcome> {
  const rotation = readRotation(cursor, motiveFeeds);
  let pulled: { ok: true; body: string; contentType: string; position: unknown; more: boolean } | Failure;
  if (rotation.feed === 'events') {
    const window = currentWindow(rotation.position, context.now, eventsWindow);
    const query = `start_time=${encodeURIComponent(window.since)}&end_time=${encodeURIComponent(window.until)}&`;
    const page = await pullPage(config, '/v1/driver_performance_events', query, pageOf(window.page), context);
    pulled = page.ok
      ? {
          ...page,
          position: { since: window.since, until: window.until, page: page.nextPage },
          more: page.nextPage !== null,
        }
      : page;
  } else {
    const page = await pullPage(
      config,
      motiveLists[rotation.feed as 'locations' | 'faults'],
      '',
      pageOf(rotation.position),
      context,
    );
    pulled = page.ok ? { ...page, position: page.nextPage, more: page.nextPage !== null } : page;
  }
  if (!pulled.ok) return pulled;
  const { nextCursor, hasMore } = advanceRotation(rotation, motiveFeeds, pulled.position, pulled.more);
  return { ok: true, page: { body: pulled.body, contentType: pulled.contentType, nextCursor, hasMore } };
}

export async function pullMotiveVehicle(
  config: ProviderConfig,
  providerVehicleId: string,
  context: PullContext,
): Promise<PullOutcome> {
  const yesterday = new Date(context.now.getTime() - 24 * 60 * 60 * 1000);
  const answer = await getJson(
    config,
    `/v3/vehicle_locations/${encodeURIComponent(providerVehicleId)}?start_date=${utcDate(yesterday)}&end_date=${utcDate(context.now)}`,
    context,
  );
  if (!answer.ok) return answer;
  const body = JSON.stringify({ motive_vehicle_id: providerVehicleId, response: answer.value });
  return { ok: true, page: { body, contentType: 'application/json', nextCursor: null, hasMore: false } };
}

export const motiveClient: PullClient = { pullFeed: pullMotiveFeed, pullVehicle: pullMotiveVehicle };
