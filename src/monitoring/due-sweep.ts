/**
 * The monitoring due sweep (`webhooks.monitoring-recover`, every 10 s), what makes the Postgres
 * schedule authoritative: a send whose worker died is recorded as a `worker_lost` attempt (it may
 * have reached the receiver, so it counts as the attempt it was) and the delivery moves on as
 * after any failure; every subscription with a delivery due and not being sent gets a lane turn,
 * so a retry whose delayed job was lost (restart, FLUSHDB) still goes out, once.
 */
import {
  listAbandonedMonitoringSends,
  listDueMonitoringLanes,
  recordMonitoringAttempts,
  type MonitoringAttemptWrite,
} from '../db/monitoring-delivery-queue.js';
import type { Pool } from '../db/pool.js';
import type { Logger } from '../log.js';
import type { Queues } from '../queue/queues.js';
import { abandonedAfterMs } from '../delivery/lane-timing.js';
import { afterAttempt } from './delivery-schedule.js';
import { requestMonitoringLanes } from '../queue/enqueue-monitoring.js';

const perSweep = 10_000;

export async function sweepMonitoringDeliveries(deps: {
  pool: Pool;
  queues: Queues;
  timeoutMs: number;
  retryDelaysMs: readonly number[];
  now: () => Date;
  log: Pick<Logger, 'warn'>;
}): Promise<{ workerLost: number; lanes: number }> {
  const now = deps.now();
  const abandoned = await listAbandonedMonitoringSends(
    deps.pool,
    new Date(now.getTime() - abandonedAfterMs(deps.timeoutMs)),
    perSweep,
  );
  const lost: MonitoringAttemptWrite[] = abandoned.map((send) => ({
    deliveryId: send.id,
    trigger: 'worker_lost',
    startedAt: send.sendingSince,
    durationMs: 0,
    statusCode: null,
    error: 'worker_lost: the delivering worker stopped after the request was started; the receiver may have it',
    ...afterAttempt(
      { status: send.status, scheduledAttempts: send.scheduledAttempts },
      { trigger: send.trigger, outcome: 'worker_lost' },
      deps.retryDelaysMs,
      now,
    ),
  }));
  const workerLost = (await recordMonitoringAttempts(deps.pool, lost)).length;
  if (workerLost > 0) {
    deps.log.warn(
      { workerLost },
      'monitoring sends of a dead worker recorded as worker_lost; retries follow the schedule',
    );
  }
  const lanes = await listDueMonitoringLanes(deps.pool, now, perSweep);
  await requestMonitoringLanes(deps.queues, lanes);
  return { workerLost, lanes: lanes.length };
}
