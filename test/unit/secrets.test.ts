import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decryptJson, decryptSecret, encryptJson, encryptSecret, newSecret } from '../../src/security/secrets.js';

const key = randomBytes(32);

describe('secrets at rest', () => {
  it('round-trips text and JSON, with a fresh IV each time', () => {
    const a = encryptSecret(key, 'whsec_abc');
    const b = encryptSecret(key, 'whsec_abc');
    expect(a.equals(b)).toBe(false);
    expect(a.includes(Buffer.from('whsec_abc'))).toBe(false);
    expect(decryptSecret(key, a)).toBe('whsec_abc');
    expect(decryptJson(key, encryptJson(key, { api_token: 't', base_url: 'https://x' }))).toEqual({
      api_token: 't',
      base_url: 'https://x',
    });
  });

  it('refuses a tampered ciphertext or the wrong key', () => {
    const sealed = encryptSecret(key, 'secret');
    const tampered = Buffer.from(sealed);
    tampered[tampered.length - 1]! ^= 1;
    expect(() => decryptSecret(key, tampered)).toThrow();
    expect(() => decryptSecret(randomBytes(32), sealed)).toThrow();
    expect(() => decryptSecret(key, Buffer.from([9, 1, 2]))).toThrow('unknown secret format');
  });

  it('makes URL-safe random secrets with a prefix', () => {
    const secret = newSecret('whsec_');
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(newSecret('whsec_')).not.toBe(secret);
  });
});
