/**
 * The recover sweep of core deliveries (`webhooks.recover`, every minute): settles the sends a
 * dead worker had started, and asks again for the lanes of deliveries still pending.
 */
import type { Pool } from '../db/pool.js';
import { failAbandonedDeliveries, listStalePendingLanes } from '../db/webhooks.js';
import type { Logger } from '../log.js';
import { enqueueGraceMs } from '../queue/after-commit.js';
import type { Queues } from '../queue/queues.js';
import { abandonedAfterMs } from '../delivery/lane-timing.js';
import { requestLanes } from '../queue/enqueue-webhooks.js';

const lanesPerSweep = 10_000;

export async function recoverDeliveries(deps: {
  pool: Pool;
  queues: Queues;
  timeoutMs: number;
  now: () => Date;
  log: Pick<Logger, 'warn'>;
}): Promise<{ workerLost: number; lanes: number }> {
  const now = deps.now().getTime();
  const workerLost = await failAbandonedDeliveries(deps.pool, new Date(now - abandonedAfterMs(deps.timeoutMs)));
  if (workerLost > 0) {
    deps.log.warn(
      { workerLost },
      'sends of a dead webhooks worker settled as worker_lost; its unsent deliveries stay pending and are sent',
    );
  }
  // A pending delivery older than the grace may have lost its lane request (Redis down after the
  // relay committed). Asking for a lane that is queued already adds nothing: no backlog piles up.
  const lanes = await listStalePendingLanes(deps.pool, new Date(now - enqueueGraceMs), lanesPerSweep);
  await requestLanes(deps.queues, lanes);
  return { workerLost, lanes: lanes.length };
}
