/**
 * Generic provider: our own documented JSON (docs/providers/generic.md), for
 * integrators and gateways without a native adapter.
 *
 *   {"readings": [{"vehicle": "<provider_vehicle_id>", "ts": "<ISO 8601>", "signals": {...}}]}
 *
 * `signals` uses the normalized vocabulary directly (units in the names); unknown keys are kept
 * under their own name. `signals.events: [{type, g}]` become provider events.
 * Push signature: `X-Signature: sha256=<hex HMAC-SHA256(secret, raw body)>`. A sender that also
 * sends `X-Signature-Timestamp: <unix seconds>` signs `<timestamp>.<raw body>` instead, and a
 * timestamp more than 5 minutes from now is refused: such a push cannot be replayed later.
 * Replays: a body seen before within the replay window is a duplicate (docs/providers/generic.md).
 */
import { providerEventKinds, type ProviderEvent, type ProviderEventKind } from '../src/domain/sample.js';
import { bodyReplayKey, jsonBodyProblem } from './push.js';
import { header, hexEquals, hmacHex } from './signing.js';
import type {
  ConnectionRules,
  NormalizeResult,
  ProviderAdapter,
  PushRequest,
  PushRules,
  RawPayload,
  VerifyResult,
} from './types.js';
import { SampleCollector, finiteNumber, isObject, parseJson, parseTime } from './values.js';

/** Largest accepted distance between `X-Signature-Timestamp` and now, either way (as Samsara's). */
export const genericTimestampToleranceSeconds = 300;

const signatureHeader = 'x-signature';

export function verifyGenericSignature(request: PushRequest, secret: string, now: Date): VerifyResult {
  const given = header(request.headers, signatureHeader);
  if (!given) return { ok: false, reason: 'missing_signature' };
  const match = /^sha256=([0-9a-fA-F]{64})$/.exec(given.trim());
  const timestamp = header(request.headers, 'x-signature-timestamp')?.trim();
  if (!match || (timestamp !== undefined && !/^\d{1,12}$/.test(timestamp)))
    return { ok: false, reason: 'bad_signature' };
  const signed =
    timestamp === undefined ? request.rawBody : Buffer.concat([Buffer.from(`${timestamp}.`, 'utf8'), request.rawBody]);
  if (!hexEquals(match[1]!, hmacHex('sha256', secret, signed))) return { ok: false, reason: 'bad_signature' };
  // Checked after the signature, so only an authentic but old (or future) push reads as stale.
  if (timestamp !== undefined && Math.abs(now.getTime() / 1000 - Number(timestamp)) > genericTimestampToleranceSeconds)
    return { ok: false, reason: 'stale_timestamp' };
  return { ok: true };
}

/** The generic format's push rules, shared with the simulator, which speaks it. */
export const genericPush: PushRules = {
  verify: verifyGenericSignature,
  bodyProblem: jsonBodyProblem,
  replayKey: bodyReplayKey,
  tokenInPath: false,
  signatureHeaders: [signatureHeader],
};

/** The signing secret is ours: generated unless the integrator brings one. */
export const genericConnection: ConnectionRules = {
  problems: () => [],
  generatedSecret: { when: 'missing', prefix: 'whsec_' },
};

export function normalizeGeneric(raw: RawPayload): NormalizeResult {
  const parsed = parseJson(raw.body);
  if (!parsed.ok) return { ok: false, reason: 'body is not JSON' };
  if (!isObject(parsed.value) || !Array.isArray(parsed.value.readings))
    return { ok: false, reason: 'expected {"readings": [...]}' };
  const collector = new SampleCollector();
  const events: ProviderEvent[] = [];
  for (const reading of parsed.value.readings) {
    if (!isObject(reading)) {
      collector.skip('reading is not an object');
      continue;
    }
    const vehicle =
      typeof reading.vehicle === 'string' || typeof reading.vehicle === 'number' ? String(reading.vehicle) : '';
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
          events.push({
            providerVehicleId: vehicle,
            kind: kind as ProviderEventKind,
            recordedAt,
            g: finiteNumber((event as Record<string, unknown>).g),
          });
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
  normalize: (raw: RawPayload) => normalizeGeneric(raw),
  refresh: 'not_implemented',
  push: genericPush,
  connection: genericConnection,
};
