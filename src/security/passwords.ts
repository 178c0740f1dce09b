/**
 * Console passwords, hashed with scrypt (memory-hard, in node:crypto, so no native dependency).
 * Parameters: N = 2^15, r = 8, p = 1 (32 MiB of memory per hash), a 16-byte random salt and a
 * 64-byte key. That is below OWASP's N = 2^17 on purpose: a sign-in costs one core for tens of
 * milliseconds on the small machines this runs on, and sign-in is rate limited. The parameters
 * are stored with each hash, so raising them later keeps old hashes verifiable.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const cost = { N: 2 ** 15, r: 8, p: 1 } as const;
const saltBytes = 16;
const keyBytes = 64;
/** The shortest password the operator API accepts (DESIGN §5). */
export const minPasswordLength = 12;

/** scrypt needs 128 * N * r bytes; Node's default ceiling (32 MiB) is exactly that, so leave headroom. */
function maxmem(options: { N: number; r: number }): number {
  return 128 * options.N * options.r * 2;
}

function derive(password: string, salt: Buffer, options: ScryptOptions & { N: number; r: number }): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, keyBytes, { ...options, maxmem: maxmem(options) }, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}

/** `scrypt$N$r$p$salt$key`, salt and key in base64. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(saltBytes);
  const key = await derive(password, salt, cost);
  return ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64'), key.toString('base64')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, key] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64');
  const given = await derive(password, Buffer.from(salt, 'base64'), { N: Number(n), r: Number(r), p: Number(p) });
  return given.length === expected.length && timingSafeEqual(given, expected);
}

let unusable: Promise<string> | null = null;

/** A hash of nothing anyone knows: verified against when the email is unknown, so timing does not tell. */
export function unusablePasswordHash(): Promise<string> {
  unusable ??= hashPassword(randomBytes(32).toString('base64'));
  return unusable;
}

/** A random password for `fleetctl user add` without --password: 18 bytes, 24 characters. */
export function generatePassword(): string {
  return randomBytes(18).toString('base64url');
}
