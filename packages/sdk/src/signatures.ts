/**
 * Receiver-side checks of the service's webhook signatures, the counterpart of its signer
 * (src/delivery/sign.ts in the service's repository; the tests sign with it). Pure apart from the
 * default clock, which `options.nowSeconds` replaces. Never throws on hostile input: every
 * malformed header is a refusal with a reason. `verifyCoreWebhook` and `verifyMonitoringWebhook`
 * (webhooks.ts) are the throwing forms most receivers want.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export type ServiceSignatureResult =
  { ok: true; timestamp: number } | { ok: false; reason: 'missing' | 'malformed' | 'expired' | 'mismatch' };

export interface VerifyOptions {
  /** The receiver's clock in unix seconds; defaults to now. */
  nowSeconds?: number;
  /** Largest accepted |now − t| in seconds; default 300, the spec's sample verifier. */
  toleranceSeconds?: number;
}

const defaultToleranceSeconds = 300;
const hexDigest = /^[0-9a-fA-F]{64}$/;

/**
 * Compares two hex digests in constant time. Anything that is not 64 hex characters is simply
 * unequal: `timingSafeEqual` throws on buffers of different lengths, so the length is settled first.
 */
function digestEquals(given: string, expectedHex: string): boolean {
  if (!hexDigest.test(given)) return false;
  const a = Buffer.from(given, 'hex');
  const b = Buffer.from(expectedHex, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Hex HMAC-SHA256 of `${t}.` followed by the body bytes: what `Service-Signature`'s v1 carries. */
function coreSignature(secret: string, body: Buffer, timestampSeconds: number): string {
  return createHmac('sha256', secret).update(`${timestampSeconds}.`, 'utf8').update(body).digest('hex');
}

/** Hex HMAC-SHA256 of the body bytes: what `X-Service-Signature`'s sha256 carries. */
function monitoringSignature(secret: string, body: Buffer): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}

function toBuffer(rawBody: Buffer | string): Buffer {
  // A string is taken as the UTF-8 text of the raw body; a parsed-and-restringified body will not match.
  return typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;
}

/**
 * Parses `t=<digits>,v1=<hex>[,v1=<hex>…]`. Other schemes (v0, future v2) are ignored so a
 * sender cannot be downgraded to them; several v1 values are allowed because a sender rotating
 * its secret signs with each live one. Whitespace around items is tolerated (proxies fold headers).
 */
function parseServiceSignature(header: string): { timestamp: number; signatures: string[] } | null {
  let timestamp: number | null = null;
  const signatures: string[] = [];
  for (const item of header.split(',')) {
    const eq = item.indexOf('=');
    if (eq < 0) return null;
    const key = item.slice(0, eq).trim();
    const value = item.slice(eq + 1).trim();
    if (key === 't') {
      // Exactly one t: with two, which one was signed would be the receiver's guess.
      if (timestamp !== null || !/^\d{1,15}$/.test(value)) return null;
      timestamp = Number(value);
    } else if (key === 'v1') {
      signatures.push(value);
    }
  }
  if (timestamp === null || signatures.length === 0) return null;
  return { timestamp, signatures };
}

/** Verifies a core `Service-Signature` header against the raw request body. */
export function verifyServiceSignature(
  header: string | undefined,
  rawBody: Buffer | string,
  secret: string,
  options: VerifyOptions = {},
): ServiceSignatureResult {
  if (header === undefined || header.trim() === '') return { ok: false, reason: 'missing' };
  const parsed = parseServiceSignature(header);
  if (!parsed) return { ok: false, reason: 'malformed' };
  const expected = coreSignature(secret, toBuffer(rawBody), parsed.timestamp);
  // Every candidate is compared (no early exit), so timing does not tell which v1 matched.
  let matched = false;
  for (const signature of parsed.signatures) matched = digestEquals(signature, expected) || matched;
  // Signature before age: "expired" then means a genuine but replayed or clock-skewed delivery,
  // which is worth telling apart from a wrong secret.
  if (!matched) return { ok: false, reason: 'mismatch' };
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  const tolerance = options.toleranceSeconds ?? defaultToleranceSeconds;
  // Both directions: a t far in the future would otherwise stay replayable until it ages out.
  if (Math.abs(now - parsed.timestamp) > tolerance) return { ok: false, reason: 'expired' };
  return { ok: true, timestamp: parsed.timestamp };
}

export type MonitoringSignatureResult = { ok: true } | { ok: false; reason: 'missing' | 'malformed' | 'mismatch' };

/**
 * Verifies a monitoring `X-Service-Signature: sha256=<hex>` header against the raw request body.
 * There is no timestamp to age: a monitoring body is byte-identical on
 * every attempt, so receivers drop repeats by `event_id` instead.
 */
export function verifyMonitoringSignature(
  header: string | undefined,
  rawBody: Buffer | string,
  secret: string,
): MonitoringSignatureResult {
  if (header === undefined || header.trim() === '') return { ok: false, reason: 'missing' };
  const match = /^sha256=(.*)$/.exec(header.trim());
  if (!match || !hexDigest.test(match[1]!)) return { ok: false, reason: 'malformed' };
  return digestEquals(match[1]!, monitoringSignature(secret, toBuffer(rawBody)))
    ? { ok: true }
    : { ok: false, reason: 'mismatch' };
}
