/**
 * Secrets at rest (provider credentials, webhook signing secrets): AES-256-GCM under SECRETS_KEY.
 * Layout: version byte (1) ‖ 12-byte IV ‖ 16-byte auth tag ‖ ciphertext. A tampered or foreign
 * ciphertext fails authentication instead of decrypting to garbage.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const version = 1;

export function encryptSecret(key: Buffer, plaintext: string): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([Buffer.from([version]), iv, cipher.getAuthTag(), ciphertext]);
}

export function decryptSecret(key: Buffer, sealed: Buffer): string {
  if (sealed[0] !== version || sealed.length < 29) throw new Error('unknown secret format');
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(1, 13));
  decipher.setAuthTag(sealed.subarray(13, 29));
  return Buffer.concat([decipher.update(sealed.subarray(29)), decipher.final()]).toString('utf8');
}

export function encryptJson(key: Buffer, value: unknown): Buffer {
  return encryptSecret(key, JSON.stringify(value));
}

export function decryptJson<T>(key: Buffer, sealed: Buffer): T {
  return JSON.parse(decryptSecret(key, sealed)) as T;
}

/** A random secret for signing (webhooks) or device tokens, URL-safe. */
export function newSecret(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}
