/**
 * Signature headers of outgoing webhooks (docs/webhooks.md). Pure: the caller reads the clock once per
 * attempt and passes the same `timestampSeconds` it puts nowhere else, so the `t` in the header
 * is always the `t` that was signed.
 *
 * They take the body as a Buffer on purpose: the caller serialises the envelope once
 * and sends exactly these bytes. Signing a string and sending a re-serialised copy is the most
 * common way webhook signatures break (docs/webhooks.md "Sources").
 */
import { createHmac } from 'node:crypto';

/** Hex HMAC-SHA256 of `${t}.` followed by the body bytes (docs/webhooks.md "Verifying signatures"). */
export function coreSignature(secret: string, body: Buffer, timestampSeconds: number): string {
  // Dot, not comma: Convoy uses a comma and copying it would produce signatures nobody verifies.
  return createHmac('sha256', secret).update(`${timestampSeconds}.`, 'utf8').update(body).digest('hex');
}

/** The core `Service-Signature` value: `t=<unix-seconds>,v1=<hex>`. */
export function signCoreBody(secret: string, body: Buffer, timestampSeconds: number): string {
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0) {
    // A fractional or negative `t` would be signed but rejected by every verifier (`t` is digits only).
    throw new RangeError('timestampSeconds must be a non-negative integer number of seconds');
  }
  return `t=${timestampSeconds},v1=${coreSignature(secret, body, timestampSeconds)}`;
}

/**
 * The monitoring `X-Service-Signature` value (docs/api.md "Webhooks"): `sha256=` and the hex
 * HMAC-SHA256 of the body bytes alone. No timestamp: the body is byte-identical on every attempt,
 * so its signature is too, and receivers deduplicate by `event_id`.
 */
export function signMonitoringBody(secret: string, body: Buffer): string {
  return `sha256=${monitoringSignature(secret, body)}`;
}

/** Hex HMAC-SHA256 of the body bytes. */
export function monitoringSignature(secret: string, body: Buffer): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}
