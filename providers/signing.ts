/** HMAC helpers shared by the adapters' signature checks. Comparisons are constant-time. */
import { createHmac, timingSafeEqual } from 'node:crypto';

export function hmacHex(algorithm: 'sha1' | 'sha256', key: string | Buffer, data: string | Buffer): string {
  return createHmac(algorithm, key).update(data).digest('hex');
}

/** Compares two hex digests without leaking where they differ; unequal lengths are simply unequal. */
export function hexEquals(given: string, expected: string): boolean {
  const a = Buffer.from(given.toLowerCase(), 'utf8');
  const b = Buffer.from(expected.toLowerCase(), 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

export function header(headers: Record<string, string | undefined>, name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  return value === undefined || value === '' ? undefined : value;
}
