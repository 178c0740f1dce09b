/**
 * Keeps the repeating jobs (job schedulers, src/queue/catalog.ts `everyMs`) in Redis. Redis may
 * lose them without any process restarting (FLUSHDB, a failover to an empty replica), and BullMQ
 * recreates a scheduler's next job only when its previous one runs, so nothing else would bring
 * them back. Every worker process checks the schedulers of its own queues at an interval and
 * upserts the ones that are missing or have no next job; an upsert is idempotent (one scheduler
 * per id), so many processes may repair at once.
 *
 * A queue may keep schedulers the catalog does not list (one per pulled provider connection):
 * `extra` says whether they are all there and restores them. They are restored at start, when a
 * check finds a catalog scheduler broken (Redis lost data, and with it these), and when a check
 * finds one of them missing while the catalog's are intact: Redis lost part of its data (a
 * failover to a replica that was behind, keys deleted by hand). Left to the job that keeps them
 * (`pull.sync-schedules`, every 5 minutes) they would be missing for minutes.
 */
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import { schedulesOf, type JobName, type QueueName, type ScheduleSettings } from './catalog.js';
import type { Queues } from './queues.js';

/** A scheduler's next job in one of these states will run; in any other (or gone) it never will. */
const liveStates = new Set(['delayed', 'waiting', 'active', 'prioritized', 'waiting-children']);

/** Schedulers a queue keeps beyond the catalog's. */
export interface ExtraSchedules {
  /** Whether every one of them is in Redis with a next run. */
  allLive(): Promise<boolean>;
  /** Upserts every one of them (idempotent: an unchanged one keeps its next run). */
  restore(): Promise<unknown>;
}

export interface ScheduleKeeper {
  /** Job names whose scheduler is missing or has no next job to run. */
  findBroken(): Promise<JobName[]>;
  /** Throws, naming them, when any scheduler is broken (readiness). */
  assertLive(): Promise<void>;
  /** Upserts every scheduler, the extra ones too (at start: applies changed intervals too). */
  upsertAll(): Promise<void>;
  /** Checks now and repairs what is broken (the extra ones too); returns the catalog's repaired. */
  repair(): Promise<JobName[]>;
  /** Starts checking every `intervalMs`; the next check starts after the previous one ends. */
  start(intervalMs: number): void;
  stop(): void;
}

export function keepSchedules(
  queues: Queues,
  names: readonly QueueName[],
  deps: { log: Logger; metrics: Metrics; config: ScheduleSettings },
  extra?: ExtraSchedules,
): ScheduleKeeper {
  const schedules = schedulesOf(names, deps.config);
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let restoreOwed = false;

  async function isLive(job: JobName): Promise<boolean> {
    const queue = queues.queueOf(job);
    const scheduler = await queue.getJobScheduler(job);
    if (!scheduler?.next) return false;
    if (liveStates.has(await queue.getJobState(`repeat:${job}:${scheduler.next}`))) return true;
    // That job may have run between the two reads; the scheduler then points at a newer one (and
    // is not gone: Redis may have lost it between the reads).
    const again = await queue.getJobScheduler(job);
    return again?.next !== undefined && again.next !== scheduler.next;
  }

  const keeper: ScheduleKeeper = {
    findBroken: async () => {
      const live = await Promise.all(schedules.map((s) => isLive(s.job)));
      return schedules.filter((_, i) => !live[i]).map((s) => s.job);
    },
    assertLive: async () => {
      const broken = await keeper.findBroken();
      if (broken.length > 0) throw new Error(`job schedulers missing in Redis: ${broken.join(', ')}`);
    },
    upsertAll: async () => {
      for (const { job, everyMs } of schedules) await queues.schedule(job, everyMs, {});
      await extra?.restore();
    },
    repair: async () => {
      const broken = await keeper.findBroken();
      for (const { job, everyMs } of schedules.filter((s) => broken.includes(s.job))) {
        await queues.schedule(job, everyMs, {});
        deps.metrics.schedulersRestored.inc({ job });
      }
      if (broken.length > 0) {
        deps.log.warn({ schedulers: broken }, 'job schedulers were missing in Redis; restored');
        restoreOwed = true;
      } else if (extra && !restoreOwed && !(await extra.allLive())) {
        deps.log.warn({ queues: names }, 'schedulers outside the catalog were missing in Redis; restoring');
        restoreOwed = true;
      }
      // Owed until it succeeds: a failed one is tried again at the next check, which may find nothing broken.
      if (extra && restoreOwed) {
        await extra.restore();
        restoreOwed = false;
      }
      return broken;
    },
    start: (intervalMs) => {
      const tick = async () => {
        await keeper.repair().catch((err: unknown) => {
          if (!stopped) deps.log.warn({ err: (err as Error).message }, 'job scheduler check failed; retrying');
        });
        if (!stopped) timer = setTimeout(tick, intervalMs);
      };
      timer = setTimeout(tick, intervalMs);
    },
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
  return keeper;
}
