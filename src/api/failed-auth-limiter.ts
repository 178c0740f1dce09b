/**
 * Limits failed authentications per client address, in process. The per-key rate limit cannot
 * see a request whose key is wrong, and each such request costs a Postgres lookup; guessing keys
 * is hopeless (256 bits) but flooding with them should not be free.
 */
export class FailedAuthLimiter {
  private readonly failures = new Map<string, { count: number; windowStart: number }>();

  constructor(
    private readonly maxFailures = 60,
    private readonly windowMs = 60_000,
    private readonly maxTracked = 100_000,
  ) {}

  /** Milliseconds until the address may try again, or 0 when it may try now. */
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
