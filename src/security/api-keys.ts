import { createHash, randomBytes } from 'node:crypto';

/** Visible marker that makes a leaked key easy to recognise (secret scanners, logs). */
const keyMarker = 'fk_';

export interface GeneratedApiKey {
  key: string;
  prefix: string;
  hash: Buffer;
}

/** A new key: 32 random bytes (256 bits), shown once; only its SHA-256 is stored. */
export function generateApiKey(): GeneratedApiKey {
  const key = keyMarker + randomBytes(32).toString('base64url');
  return { key, prefix: apiKeyPrefix(key), hash: hashApiKey(key) };
}

/** The part of a key shown wherever it is named (lists, logs): the marker and 6 random characters. */
export function apiKeyPrefix(key: string): string {
  return key.slice(0, keyMarker.length + 6);
}

const keyShape = /^fk_[A-Za-z0-9_-]{43}$/;

/** Whether `token` has the shape of a generated key; anything else cannot be one and needs no lookup. */
export function hasApiKeyShape(token: string): boolean {
  return keyShape.test(token);
}

export function hashApiKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}
