/** How long delivery lane turns last, core and monitoring alike (docs/webhooks.md "Lanes, fair sharing and crashes"). */

/**
 * A turn starts no send after this; the lane then goes to the back of the queue, so a busy
 * subscription shares the worker with every other lane that has work.
 */
export const laneTurnMs = 1_000;
/** How long a lane over its company's share waits before it asks again (core and monitoring lanes). */
export const deferMs = 1_000;

/**
 * After this long a claimed delivery belongs to a dead worker: its send started when it was
 * claimed, settles within the timeout, and is recorded by the end of its turn.
 */
export function abandonedAfterMs(timeoutMs: number): number {
  return laneTurnMs + timeoutMs + 60_000;
}
