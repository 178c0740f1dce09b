/**
 * Enqueueing after a commit. The rows that owe a job are durable in Postgres before the job is
 * added, and a repeating sweep finds any row whose job never came (src/queue/catalog.ts). So when
 * Redis is away the enqueue is only logged, the caller goes on, and the named sweep catches up.
 */
import type { Logger } from '../log.js';
import type { JobName } from './catalog.js';

/**
 * Work committed less than this long ago may still be on its way to the queue; sweeps leave it
 * alone so they do not enqueue everything twice.
 */
export const enqueueGraceMs = 30_000;

export async function enqueueAfterCommit(
  log: Pick<Logger, 'warn'>,
  sweep: JobName,
  enqueue: () => Promise<unknown>,
  context: Record<string, unknown> = {},
): Promise<void> {
  try {
    await enqueue();
  } catch (err) {
    log.warn({ ...context, sweep, err: (err as Error).message }, `enqueue failed; ${sweep} will catch up`);
  }
}
