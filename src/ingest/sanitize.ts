/**
 * The one check every adapter's output passes before it reaches Postgres (Traccar's
 * BaseProtocolDecoder filters every decoder's positions the same way): samples and events
 * Postgres cannot store, or should not, are dropped with a reason and counted as skipped. Pure.
 *
 * - text: a NUL character (text and jsonb refuse it) or a lone UTF-16 surrogate (invalid in
 *   UTF-8 and in JSON escapes) in the provider vehicle id, the signal name or anywhere in the
 *   value, object keys included;
 * - time: recorded before `earliestSampleTime` or more than `maxFutureSkewMs` after receipt;
 * - size: ids and names past their length limits, unknown-signal values past their byte limit;
 * - reserved names: a vocabulary signal must hold a value the vocabulary accepts, and the read
 *   model's own fields are never signals, so a provider's unknown key cannot overwrite either.
 *
 * Limits: providers/limits.ts.
 */
import {
  earliestSampleTime,
  maxProviderVehicleIdChars,
  maxSignalNameChars,
  maxUnknownSignalValueBytes,
  readModelFields,
} from '../../providers/limits.js';
import { checkSignal } from '../../providers/values.js';
import { maxFutureSkewMs, signalNames, type ProviderEvent, type Sample } from '../domain/sample.js';

export const rejectReasons = [
  'nul_character',
  'malformed_unicode',
  'time_out_of_range',
  'id_too_long',
  'name_too_long',
  'value_too_large',
  'reserved_name',
  'invalid_value',
] as const;
export type RejectReason = (typeof rejectReasons)[number];

export interface Sanitized {
  samples: Sample[];
  events: ProviderEvent[];
  /** Dropped samples and events by reason. */
  rejected: Partial<Record<RejectReason, number>>;
}

const vocabulary: ReadonlySet<string> = new Set(signalNames);
const readModelOnly: ReadonlySet<string> = new Set(readModelFields);

// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function textProblem(text: string): RejectReason | null {
  if (text.includes('\u0000')) return 'nul_character';
  return loneSurrogate.test(text) ? 'malformed_unicode' : null;
}

/** The first text problem anywhere in a JSON value, keys included. */
function valueTextProblem(value: unknown): RejectReason | null {
  if (typeof value === 'string') return textProblem(value);
  if (typeof value !== 'object' || value === null) return null;
  if (Array.isArray(value)) {
    for (const inner of value) {
      const problem = valueTextProblem(inner);
      if (problem) return problem;
    }
    return null;
  }
  for (const key in value) {
    const problem = textProblem(key) ?? valueTextProblem((value as Record<string, unknown>)[key]);
    if (problem) return problem;
  }
  return null;
}

function idProblem(id: string): RejectReason | null {
  return id.length > maxProviderVehicleIdChars ? 'id_too_long' : textProblem(id);
}

function nameProblem(name: string): RejectReason | null {
  if (name.length > maxSignalNameChars) return 'name_too_long';
  if (readModelOnly.has(name)) return 'reserved_name';
  return textProblem(name);
}

function serializedBytes(value: unknown): number {
  try {
    return Buffer.byteLength(JSON.stringify(value) ?? '');
  } catch {
    // Nested too deep to serialize: far past any size limit.
    return Number.POSITIVE_INFINITY;
  }
}

function valueProblem(signal: string, value: Sample['value']): RejectReason | null {
  if (vocabulary.has(signal)) {
    if (!checkSignal(signal, value).ok) return 'invalid_value';
  } else if (typeof value === 'number' || typeof value === 'boolean') {
    return null;
  } else if (serializedBytes(value) > maxUnknownSignalValueBytes) {
    return 'value_too_large';
  }
  try {
    return valueTextProblem(value);
  } catch {
    // Nested deeper than the stack (only an adapter that skipped the vocabulary's shapes gets here).
    return 'value_too_large';
  }
}

export function sanitizeNormalized(
  samples: readonly Sample[],
  events: readonly ProviderEvent[],
  receivedAt: Date,
): Sanitized {
  const earliest = earliestSampleTime.getTime();
  const latest = receivedAt.getTime() + maxFutureSkewMs;
  const rejected: Partial<Record<RejectReason, number>> = {};
  const reject = (reason: RejectReason) => {
    rejected[reason] = (rejected[reason] ?? 0) + 1;
  };
  // A payload repeats few ids and names many times: each is checked once.
  const ids = new Map<string, RejectReason | null>();
  const names = new Map<string, RejectReason | null>();
  const checkId = (id: string) => {
    let problem = ids.get(id);
    if (problem === undefined) ids.set(id, (problem = idProblem(id)));
    return problem;
  };
  const timeProblem = (at: Date): RejectReason | null => {
    const ms = at.getTime();
    return ms >= earliest && ms <= latest ? null : 'time_out_of_range';
  };

  const kept: Sample[] = [];
  for (const sample of samples) {
    let nameCheck = names.get(sample.signal);
    if (nameCheck === undefined) names.set(sample.signal, (nameCheck = nameProblem(sample.signal)));
    const problem =
      checkId(sample.providerVehicleId) ??
      nameCheck ??
      timeProblem(sample.recordedAt) ??
      valueProblem(sample.signal, sample.value);
    if (problem) reject(problem);
    else kept.push(sample);
  }
  const keptEvents: ProviderEvent[] = [];
  for (const event of events) {
    const problem = checkId(event.providerVehicleId) ?? timeProblem(event.recordedAt);
    if (problem) reject(problem);
    else keptEvents.push(event);
  }
  return { samples: kept, events: keptEvents, rejected };
}

export function rejectedCount(rejected: Partial<Record<RejectReason, number>>): number {
  return Object.values(rejected).reduce((sum, n) => sum + n, 0);
}

/** Text made storable in a text column: NUL characters removed, lone surrogates replaced. */
export function storableText(text: string): string {
  return text.replaceAll('\u0000', '').replace(new RegExp(loneSurrogate.source, 'g'), '\uFFFD');
}
