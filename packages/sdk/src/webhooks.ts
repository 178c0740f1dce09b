/**
 * Verifying the service's webhooks before trusting them: run events (`Service-Signature`,
 * Stripe-style `t=…,v1=…`) and monitoring events (`X-Service-Signature: sha256=…`). Both take the
 * raw body exactly as received (a parsed and re-serialised body does not match), compare in
 * constant time, and throw a `WebhookVerificationError` rather than return a flag that could go
 * unchecked. On success they return the parsed event.
 */
import { verifyMonitoringSignature, verifyServiceSignature } from './signatures.js';

/** A run event (`run.created`, `run.completed`, …, and `webhook.test`). */
export interface CoreWebhookEvent {
  event: string;
  /** Fixed per event: deliveries can repeat, deduplicate on it. */
  event_id: string;
  api_version: string;
  timestamp: string;
  data: { id: string; updated_at: string; [field: string]: unknown };
}

/** A monitoring event, as sent to a monitoring subscription's `webhook_url`. */
export interface MonitoringWebhookEvent {
  event: string;
  /** Fixed per event and byte-identical on every attempt: deduplicate on it. */
  event_id: string;
  subscription_id: string;
  vehicle_id: string;
  timestamp: string;
  occurred_at: string;
  severity: 'info' | 'low' | 'medium' | 'high' | 'critical';
  details: { type: string; description: string; [field: string]: unknown };
  actions: { recommended: string; urgent: boolean; can_drive: boolean };
  [field: string]: unknown;
}

export type WebhookVerificationReason = 'missing' | 'malformed' | 'expired' | 'mismatch';

export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
  constructor(
    /** `missing` or `malformed` header, `expired` (genuine but older or newer than the tolerance), `mismatch` (wrong secret or altered body). */
    readonly reason: WebhookVerificationReason,
  ) {
    super(`webhook signature ${reason}`);
  }
}

export interface CoreVerifyOptions {
  /** Largest accepted |now − t| in seconds; default 300. */
  toleranceSec?: number;
  /** The receiver's clock in unix seconds; default now. */
  nowSec?: number;
}

function parse<T>(rawBody: Uint8Array | string): T {
  return JSON.parse(typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody).toString('utf8')) as T;
}

function bytes(rawBody: Uint8Array | string): Buffer | string {
  return typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.byteLength);
}

/**
 * Checks a run event's `Service-Signature` header against the raw body with the subscription's
 * `signing_secret`, then returns the parsed event. Throws `WebhookVerificationError` when the
 * header is missing or malformed, the signature does not match, or `t` is further than
 * `toleranceSec` (default 300) from now.
 */
export function verifyCoreWebhook<T = CoreWebhookEvent>(
  secret: string,
  header: string | null | undefined,
  rawBody: Uint8Array | string,
  options: CoreVerifyOptions = {},
): T {
  const result = verifyServiceSignature(header ?? undefined, bytes(rawBody), secret, {
    ...(options.toleranceSec === undefined ? {} : { toleranceSeconds: options.toleranceSec }),
    ...(options.nowSec === undefined ? {} : { nowSeconds: options.nowSec }),
  });
  if (!result.ok) throw new WebhookVerificationError(result.reason);
  return parse<T>(rawBody);
}

/**
 * Checks a monitoring event's `X-Service-Signature` header against the raw body with the
 * monitoring subscription's `signing_secret`, then returns the parsed event. There is no
 * timestamp to age (the body is byte-identical on every attempt): drop repeats by `event_id`.
 */
export function verifyMonitoringWebhook<T = MonitoringWebhookEvent>(
  secret: string,
  header: string | null | undefined,
  rawBody: Uint8Array | string,
): T {
  const result = verifyMonitoringSignature(header ?? undefined, bytes(rawBody), secret);
  if (!result.ok) throw new WebhookVerificationError(result.reason);
  return parse<T>(rawBody);
}
