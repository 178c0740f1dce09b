/**
 * Motive pulls (research/providers.md §3.1), authenticated with `X-Api-Key: <api_token>`.
 *
 * - pullFeed: `GET /v1/vehicle_locations?per_page=100&page_no=<n>`, the current location of every
 *   vehicle. Motive has no change feed, so the cursor is only the next page number ("2", "3", …;
 *   null = page 1). More pages follow while `page_no * per_page < pagination.total`; after the last
 *   page the cursor is null and the next poll starts over at page 1. The body is stored as-is.
 * - pullVehicle (refresh): `GET /v3/vehicle_locations/<id>?start_date=<yesterday>&end_date=<today>`
 *   (dates YYYY-MM-DD in UTC: Motive's times are UTC unless `X-Time-Zone` is sent, §3.1; the range
 *   is far inside the 3-month limit). The v3 response shape is not in the notes [UNCONFIRMED] and
 *   may not name the vehicle, so the stored body is the wrapper
 *   `{"motive_vehicle_id": "<id>", "response": <raw JSON>}` that motive.ts normalizes.
 */
import { providerRequest } from './http.js';
import { motiveNextPage, motivePerPage } from './motive.js';
import type { Fetch, ProviderConfig, PullClient, PullOutcome } from './types.js';
import { isObject, parseJson } from './values.js';

function settings(config: ProviderConfig): { baseUrl: string; apiToken: string } | null {
  if (!config.base_url || !config.api_token) return null;
  return { baseUrl: config.base_url.replace(/\/+$/, ''), apiToken: config.api_token };
}

const notConfigured: PullOutcome = { ok: false, kind: 'failed', message: 'motive connection needs base_url and api_token' };

/** The page a cursor points at: a positive integer, else page 1 (a garbled cursor restarts the sweep). */
function pageOf(cursor: string | null): number {
  const page = cursor === null ? NaN : Number(cursor);
  return Number.isInteger(page) && page >= 1 ? page : 1;
}

/** YYYY-MM-DD of `date` in UTC. */
function utcDate(date: Date): string {
  return date.toISOString().slice(0, 10);
}

export async function pullMotiveFeed(config: ProviderConfig, cursor: string | null, fetchImpl: Fetch): Promise<PullOutcome> {
  const motive = settings(config);
  if (!motive) return notConfigured;
  const page = pageOf(cursor);
  const url = `${motive.baseUrl}/v1/vehicle_locations?per_page=${motivePerPage}&page_no=${page}`;
  const response = await providerRequest(fetchImpl, url, { method: 'GET', headers: { 'X-Api-Key': motive.apiToken, Accept: 'application/json' } });
  if (!response.ok) return response;
  const parsed = parseJson(response.body);
  if (!parsed.ok || !isObject(parsed.value)) return { ok: false, kind: 'failed', message: 'motive /v1/vehicle_locations returned a body that is not a JSON object' };
  // Without a pagination block there is no way to know about more pages: treat this one as the last.
  const nextCursor = motiveNextPage(parsed.value.pagination, page);
  return { ok: true, page: { body: response.body, contentType: response.contentType, nextCursor, hasMore: nextCursor !== null } };
}

/** `now` is a parameter so tests can fix the date range; callers through PullClient get the clock. */
export async function pullMotiveVehicle(config: ProviderConfig, providerVehicleId: string, fetchImpl: Fetch, now: Date = new Date()): Promise<PullOutcome> {
  const motive = settings(config);
  if (!motive) return notConfigured;
  const yesterday = new Date(now.getTime() - 24 * 60 * 60 * 1000);
  const url = `${motive.baseUrl}/v3/vehicle_locations/${encodeURIComponent(providerVehicleId)}?start_date=${utcDate(yesterday)}&end_date=${utcDate(now)}`;
  const response = await providerRequest(fetchImpl, url, { method: 'GET', headers: { 'X-Api-Key': motive.apiToken, Accept: 'application/json' } });
  if (!response.ok) return response;
  const parsed = parseJson(response.body);
  if (!parsed.ok) return { ok: false, kind: 'failed', message: 'motive /v3/vehicle_locations returned a body that is not JSON' };
  const body = JSON.stringify({ motive_vehicle_id: providerVehicleId, response: parsed.value });
  return { ok: true, page: { body, contentType: 'application/json', nextCursor: null, hasMore: false } };
}

export const motiveClient: PullClient = {
  pullFeed: pullMotiveFeed,
  pullVehicle: (config, providerVehicleId, fetchImpl) => pullMotiveVehicle(config, providerVehicleId, fetchImpl),
};
