/**
 * Counts failed authentications per client address, in process. The per-key rate limit cannot
 * see a request whose key is wrong; guessing keys is hopeless (256 bits), but a flood of wrong
 * ones should not be free, and a broken client should be told to back off. Only failures are
 * limited: a request with a valid key is never refused here, so many clients behind one proxy or
 * NAT address are not locked out by one of them (src/api/auth.ts).
 */
export class FailedAuthLimiter {
  private readonly failures = new Map<string, { count: number; windowStart: number }>();

  constructor(
    private readonly maxFailures = 60,
    private readonly windowMs = 60_000,
    private readonly maxTracked = 100_000,
  ) {}

  /** Milliseconds until the address's failures stop being refused, or 0 when they are not. */
  blockedFor(address: string, now: number): number {
    const entry = this.failures.get(address);
    if (!entry || now - entry.windowStart >= this.windowMs) return 0;
    return entry.count >= this.maxFailures ? entry.windowStart + this.windowMs - now : 0;
  }

  recordFailure(address: string, now: number): void {
    const entry = this.failures.get(address);
    if (!entry || now - entry.windowStart >= this.windowMs) {
      // Under a flood from very many addresses, start over rather than grow without bound.
      if (this.failures.size >= this.maxTracked) this.failures.clear();
      this.failures.set(address, { count: 1, windowStart: now });
    } else {
      entry.count++;
    }
  }
}
