/**
 * Generic provider: our own documented JSON (DESIGN §6, docs/providers/generic.md), for
 * integrators and gateways without a native adapter.
 *
 *   {"readings": [{"vehicle": "<provider_vehicle_id>", "ts": "<ISO 8601>", "signals": {...}}]}
 *
 * `signals` uses the normalized vocabulary directly (units in the names); unknown keys are kept
 * under their own name. `signals.events: [{type, g}]` become provider events.
 * Push signature: `X-Signature: sha256=<hex HMAC-SHA256(secret, raw body)>`.
 */
import { providerEventKinds, type ProviderEvent, type ProviderEventKind } from '../src/domain/sample.js';
import { header, hexEquals, hmacHex } from './signing.js';
import type { NormalizeResult, ProviderAdapter, PushRequest, RawPayload, VerifyResult } from './types.js';
import { SampleCollector, finiteNumber, isObject, parseJson, parseTime } from './values.js';

export function verifyGenericSignature(request: PushRequest, secret: string): VerifyResult {
  const given = header(request.headers, 'x-signature');
  if (!given) return { ok: false, reason: 'missing_signature' };
  const match = /^sha256=([0-9a-fA-F]{64})$/.exec(given.trim());
  if (!match) return { ok: false, reason: 'bad_signature' };
  return hexEquals(match[1]!, hmacHex('sha256', secret, request.rawBody)) ? { ok: true } : { ok: false, reason: 'bad_signature' };
}

export function normalizeGeneric(raw: RawPayload): NormalizeResult {
  const parsed = parseJson(raw.body);
  if (!parsed.ok) return { ok: false, reason: 'body is not JSON' };
  if (!isObject(parsed.value) || !Array.isArray(parsed.value.readings)) return { ok: false, reason: 'expected {"readings": [...]}' };
  const collector = new SampleCollector();
  const events: ProviderEvent[] = [];
  for (const reading of parsed.value.readings) {
    if (!isObject(reading)) {
      collector.skip('reading is not an object');
      continue;
    }
    const vehicle = typeof reading.vehicle === 'string' || typeof reading.vehicle === 'number' ? String(reading.vehicle) : '';
    const recordedAt = parseTime(reading.ts);
    if (!vehicle || !isObject(reading.signals)) {
      collector.skip('reading without vehicle or signals');
      continue;
    }
    for (const [signal, value] of Object.entries(reading.signals)) {
      if (signal === 'events') {
        for (const event of Array.isArray(value) ? value : []) {
          const kind = isObject(event) ? event.type : undefined;
          if (!recordedAt || !providerEventKinds.includes(kind as ProviderEventKind)) {
            collector.skip(`event ${String(kind)} unknown or untimed`);
            continue;
          }
          events.push({ providerVehicleId: vehicle, kind: kind as ProviderEventKind, recordedAt, g: finiteNumber((event as Record<string, unknown>).g) });
        }
        continue;
      }
      collector.add(vehicle, signal, recordedAt, value);
    }
  }
  return { ok: true, samples: collector.samples, events, skipped: collector.skipped };
}

export const generic: ProviderAdapter = {
  id: 'generic',
  verifyPush: (request, secret) => verifyGenericSignature(request, secret),
  normalize: (raw: RawPayload) => normalizeGeneric(raw),
  refresh: 'not_implemented',
};
