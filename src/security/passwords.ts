/**
 * Console passwords, hashed with scrypt (memory-hard, in node:crypto, so no native dependency).
 * Parameters: N = 2^15, r = 8, p = 1 (32 MiB of memory per hash), a 16-byte random salt and a
 * 64-byte key. That is below OWASP's N = 2^17 on purpose: a sign-in costs one core for tens of
 * milliseconds on the small machines this runs on, and sign-in is rate limited. The parameters
 * are stored with each hash, so raising them later keeps old hashes verifiable.
 *
 * Hashing and verifying pass one process-wide gate: a few at once (each holds a libuv thread and
 * 32 MiB), a short queue behind them, and past that an immediate 503 with Retry-After, so a burst
 * of sign-ins (or of users created) cannot queue CPU and memory without bound.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { AppError } from '../errors.js';

const cost = { N: 2 ** 15, r: 8, p: 1 } as const;
const saltBytes = 16;
const keyBytes = 64;
/** The shortest password the operator API accepts (docs/operator-api.md). */
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

/**
 * At most `running` tasks at once and `waiting` more queued behind them; one more is refused at
 * once with `busy()` instead of joining the queue.
 */
export class WorkGate {
  private active = 0;
  private readonly queue: Array<() => void> = [];

  constructor(
    readonly running: number,
    readonly waiting: number,
    private readonly busy: () => Error,
  ) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active < this.running) this.active++;
    else if (this.queue.length < this.waiting) await new Promise<void>((resolve) => this.queue.push(resolve));
    else throw this.busy();
    try {
      return await task();
    } finally {
      // The slot passes straight to the next waiter, so `active` never exceeds `running`.
      const next = this.queue.shift();
      if (next) next();
      else this.active--;
    }
  }
}

/**
 * Two scrypt runs at once leave the rest of libuv's four threads to DNS, files and zlib; 16
 * waiting is about half a second of queue at tens of milliseconds each.
 */
export const passwordWork = new WorkGate(
  2,
  16,
  () =>
    new AppError(
      'SERVICE_UNAVAILABLE',
      'too many password checks at once; retry after the Retry-After seconds',
      null,
      1,
    ),
);

function hash(password: string): Promise<string> {
  const salt = randomBytes(saltBytes);
  return derive(password, salt, cost).then((key) =>
    ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64'), key.toString('base64')].join('$'),
  );
}

/** `scrypt$N$r$p$salt$key`, salt and key in base64. */
export function hashPassword(password: string): Promise<string> {
  return passwordWork.run(() => hash(password));
}

export function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, key] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !key) return Promise.resolve(false);
  const expected = Buffer.from(key, 'base64');
  return passwordWork.run(async () => {
    const given = await derive(password, Buffer.from(salt, 'base64'), { N: Number(n), r: Number(r), p: Number(p) });
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

let unusable: Promise<string> | null = null;

/**
 * A hash of nothing anyone knows: verified against when the email is unknown, so timing does not
 * tell. Made once per process outside the gate, so a busy moment cannot leave a refusal cached.
 */
export function unusablePasswordHash(): Promise<string> {
  unusable ??= hash(randomBytes(32).toString('base64'));
  return unusable;
}

/** A random password for `fleetctl user add` without --password: 18 bytes, 24 characters. */
export function generatePassword(): string {
  return randomBytes(18).toString('base64url');
}
