/**
 * Samsara pull client (research/providers.md §1.1).
 *
 * - Feed: `GET {base_url}/fleet/vehicles/stats/feed?types=...&after=<cursor>`. The first call (no
 *   `after`) returns the last known values; each page's `pagination.endCursor` is passed back as
 *   `after`; `hasNextPage` says whether more is ready now (if not, Samsara asks for ≥ 5 s before polling).
 * - One vehicle now: the snapshot `GET {base_url}/fleet/vehicles/stats?types=...&vehicleIds=<id>`.
 *
 * Samsara allows at most 3 `types` per request and a feed cursor belongs to its type list, so each
 * page is ONE request with the three distance/fuel types: `obdOdometerMeters` and
 * `gpsOdometerMeters` (request both: which one a vehicle has depends on its OBD coverage, §1.2) and
 * `fuelPercents`. Location, engine state, battery, coolant and faults would need their own feeds
 * with their own cursors. Auth: `Authorization: Bearer <api_token>`. 429 → rate limited with the
 * (possibly fractional) `Retry-After` seconds (providerRequest).
 */
import { providerRequest } from './http.js';
import type { Fetch, ProviderConfig, PullClient, PullOutcome } from './types.js';
import { isObject, parseJson } from './values.js';

const samsaraStatTypes = ['obdOdometerMeters', 'gpsOdometerMeters', 'fuelPercents'] as const;

async function get(config: ProviderConfig, pathAndQuery: string, fetchImpl: Fetch): Promise<{ ok: true; body: string; contentType: string; pagination: Record<string, unknown> } | Exclude<PullOutcome, { ok: true }>> {
  if (!config.api_token) return { ok: false, kind: 'failed', message: 'samsara connection has no api_token' };
  // Set to https://api.samsara.com when the connection is created with a token (connection-config).
  if (!config.base_url) return { ok: false, kind: 'failed', message: 'samsara connection has no base_url' };
  const response = await providerRequest(fetchImpl, `${config.base_url.replace(/\/+$/, '')}${pathAndQuery}`, {
    method: 'GET',
    headers: { authorization: `Bearer ${config.api_token}`, accept: 'application/json' },
  });
  if (!response.ok) return response;
  const parsed = parseJson(response.body);
  if (!parsed.ok || !isObject(parsed.value) || !Array.isArray(parsed.value.data)) return { ok: false, kind: 'failed', message: 'samsara response is not {"data": [...]}' };
  return { ...response, pagination: isObject(parsed.value.pagination) ? parsed.value.pagination : {} };
}

const types = samsaraStatTypes.join(',');

export const samsaraClient: PullClient = {
  async pullFeed(config, cursor, fetchImpl) {
    const after = cursor === null ? '' : `&after=${encodeURIComponent(cursor)}`;
    const response = await get(config, `/fleet/vehicles/stats/feed?types=${types}${after}`, fetchImpl);
    if (!response.ok) return response;
    const { endCursor, hasNextPage } = response.pagination;
    // A page without an endCursor keeps the cursor it was fetched with, so nothing is skipped.
    const nextCursor = typeof endCursor === 'string' && endCursor !== '' ? endCursor : cursor;
    return { ok: true, page: { body: response.body, contentType: response.contentType, nextCursor, hasMore: hasNextPage === true } };
  },

  async pullVehicle(config, providerVehicleId, fetchImpl) {
    const response = await get(config, `/fleet/vehicles/stats?types=${types}&vehicleIds=${encodeURIComponent(providerVehicleId)}`, fetchImpl);
    if (!response.ok) return response;
    // The snapshot's endCursor pages the vehicle list, not the feed: it is never a feed cursor.
    return { ok: true, page: { body: response.body, contentType: response.contentType, nextCursor: null, hasMore: false } };
  },
};
