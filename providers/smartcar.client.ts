/**
 * Smartcar pulls (docs/providers/smartcar.md). Smartcar pushes vehicle state through webhooks, so
 * there is no feed; a refresh asks the carmaker's cloud through one v2.0 batch request:
 *
 *   POST <base_url>/v2.0/vehicles/<id>/batch
 *   Authorization: Bearer <api_token>, SC-Unit-System: metric
 *   {"requests": [{"path": "/odometer"}, {"path": "/fuel"}, {"path": "/battery"},
 *                 {"path": "/tires/pressure"}, {"path": "/engine/oil"}, {"path": "/location"},
 *                 {"path": "/diagnostics/dtcs"}, {"path": "/diagnostics/system_status"}]}
 *
 * Every signal the v2.0 API offers that the health and monitoring rules read: distance, fuel, the
 * EV battery, tires, oil life, position, trouble codes and the ABS/airbag/transmission/… system
 * statuses. A path the vehicle cannot answer comes back as its own non-200 entry and is skipped.
 *
 * The stored body is `{"smartcar_vehicle_id", "unit_system": "metric", "response": <raw JSON>}`
 * (the batch response does not name the vehicle), which smartcar.ts normalizes. A 429 (app or
 * per-vehicle limit) becomes rate_limited with the response's Retry-After.
 */
import { endpoint, providerRequest } from './http.js';
import type { ProviderConfig, PullClient, PullContext, PullOutcome } from './types.js';
import { parseJson } from './values.js';

export const smartcarBatchPaths = [
  '/odometer',
  '/fuel',
  '/battery',
  '/tires/pressure',
  '/engine/oil',
  '/location',
  '/diagnostics/dtcs',
  '/diagnostics/system_status',
] as const;

/** The unit system we request; the adapter still honours each entry's `sc-unit-system`. */
const unitSystem = 'metric';

export async function pullSmartcarVehicle(
  config: ProviderConfig,
  providerVehicleId: string,
  context: PullContext,
): Promise<PullOutcome> {
  if (!config.base_url || !config.api_token)
    return { ok: false, kind: 'failed', message: 'smartcar connection needs base_url and api_token' };
  const response = await providerRequest(context.http, {
    url: endpoint(config.base_url, `/v2.0/vehicles/${encodeURIComponent(providerVehicleId)}/batch`),
    method: 'POST',
    headers: {
      Authorization: `Bearer ${config.api_token}`,
      'SC-Unit-System': unitSystem,
      'Content-Type': 'application/json',
      Accept: 'application/json',
    },
    body: JSON.stringify({ requests: smartcarBatchPaths.map((path) => ({ path })) }),
  });
  if (!response.ok) return response;
  const parsed = parseJson(response.body);
  if (!parsed.ok) return { ok: false, kind: 'failed', message: 'smartcar batch returned a body that is not JSON' };
  const body = JSON.stringify({
    smartcar_vehicle_id: providerVehicleId,
    unit_system: unitSystem,
    response: parsed.value,
  });
  return { ok: true, page: { body, contentType: 'application/json', nextCursor: null, hasMore: false } };
}

export const smartcarClient: PullClient = {
  pullVehicle: pullSmartcarVehicle,
};
