/**
 * The API's pool of worker threads for CPU-heavy requests (issue 16): a dry run over stored
 * history and a report PDF run here, off the event loop, so `/healthz` and every other request
 * keep being answered while they compute. Piscina underneath; each API process owns one pool
 * (created with the app's deps, destroyed when the app closes).
 *
 * Bounds, each answered in the error envelope, never a stall:
 * - time: a task computes at most CPU_TASK_BUDGET_MS on its thread (from the moment it starts
 *   there with all its input); then its thread is stopped (piscina terminates it and starts
 *   another on demand) and the request answers 422 WORK_BUDGET_EXCEEDED naming the limit;
 * - work: a dry run runs at most MONITORING_DRY_RUN_MAX_FENCE_TESTS geofence tests (same answer);
 * - queue: at most CPU_POOL_QUEUE tasks wait for a thread; one more answers 503 with Retry-After;
 * - fairness: one company holds at most CPU_POOL_TASKS_PER_COMPANY of those places (running or
 *   waiting); one more answers 429 with Retry-After, so a tenant's burst never fills the queue
 *   every other tenant waits in;
 * - shutdown: tasks in flight are stopped and answer 503 with Retry-After (`close`).
 *
 * Threads are started on demand and stopped after `idleTimeoutMs`, at a lower CPU priority
 * (`niceIncrement`) so the event loop's thread wins the cores when both want them.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { Config } from '../config.js';
import { AppError, rateLimited } from '../errors.js';
import type { HistoryReport } from '../history/types.js';
import type { Logger } from '../log.js';
import type { DryRunAnswerContext, DryRunInput } from '../monitoring/dry-run.js';
import { projectRoot } from '../paths.js';
import { SharedFenceCache, type GeofenceText, type SharedFences } from './shared-fences.js';
import type { DryRunLists, DryRunOutcome, DryRunTask, HistoryPdfTask, ListMessage } from './tasks.js';

/** A thread idle this long is stopped (the next task starts one again, in about 100 ms). */
const idleTimeoutMs = 60_000;
/** Added to the threads' nice value: below the event loop's priority, so probes stay fast under load. */
const niceIncrement = 10;
/** Retry-After of a task stopped by shutdown: another instance (or this one restarted) takes it. */
const shutdownRetryAfterSeconds = 1;

/**
 * The compiled task module. Threads load JavaScript only: from dist/ it is this file's neighbour;
 * from the TypeScript sources (vitest) it is the build's copy (the test script builds first).
 */
function taskModule(): string {
  const here = fileURLToPath(import.meta.url);
  const file = here.endsWith('.ts')
    ? join(projectRoot, 'dist', 'src', 'cpu-pool', 'tasks.js')
    : join(here, '..', 'tasks.js');
  if (!existsSync(file)) throw new Error(`the CPU pool's task module ${file} is missing: run npm run build`);
  return file;
}

type TaskName = 'dryRun' | 'historyPdf';

export class CpuPool {
  private readonly piscina: Piscina;
  private readonly budgetMs: number;
  /** Tasks this pool may hold at once: one per thread, plus CPU_POOL_QUEUE waiting. */
  private readonly capacity: number;
  private readonly maxQueue: number;
  private inFlight = 0;
  /** Tasks running or waiting, by company (absent: none). */
  private readonly inFlightByCompany = new Map<string, number>();
  private readonly tasksPerCompany: number;
  private closing = false;
  /** How to stop each task in flight, for `close`. */
  private readonly running = new Set<() => void>();
  private readonly maxFenceTests: number;
  private readonly fences = new SharedFenceCache();

  constructor(
    config: Pick<
      Config,
      'cpuPoolThreads' | 'cpuPoolQueue' | 'cpuPoolTasksPerCompany' | 'cpuTaskBudgetMs' | 'monitoringDryRunMaxFenceTests'
    >,
    private readonly log: Logger,
  ) {
    this.budgetMs = config.cpuTaskBudgetMs;
    this.maxQueue = config.cpuPoolQueue;
    this.capacity = config.cpuPoolThreads + config.cpuPoolQueue;
    this.tasksPerCompany = config.cpuPoolTasksPerCompany;
    this.maxFenceTests = config.monitoringDryRunMaxFenceTests;
    this.piscina = new Piscina({
      filename: taskModule(),
      minThreads: 0,
      maxThreads: config.cpuPoolThreads,
      idleTimeout: idleTimeoutMs,
      niceIncrement,
    });
  }

  /**
   * The fences with these ids (a version: fences never change) in shared memory for the threads;
   * `load` reads those of a slice of the ids when this process has not shared that version yet
   * (src/cpu-pool/shared-fences.ts).
   */
  sharedFences(
    ids: readonly string[],
    load: (ids: readonly string[]) => Promise<GeofenceText[]>,
  ): Promise<SharedFences> {
    return this.fences.get(ids, load);
  }

  /**
   * A dry run (src/monitoring/dry-run.ts) over these fences on a thread, within the budgets: the
   * window's pages follow the task as `pages` yields them (each a JSON text; db/monitoring-history.ts),
   * and the answer's `data` comes back as UTF-8 JSON, built and serialized on the thread. A page
   * source that throws (the window is over its bound) cancels the task, and that error is thrown.
   */
  async dryRun(
    input: Omit<DryRunInput, 'geofences' | 'maxFenceTests' | 'samples' | 'events'>,
    answer: DryRunAnswerContext,
    fences: SharedFences,
    pages: { [K in keyof DryRunLists]: AsyncIterable<DryRunLists[K][number]> },
    companyId: string,
  ): Promise<Buffer> {
    const outcome = await this.run<DryRunOutcome>(
      'dryRun',
      (port): DryRunTask => ({ port, input: { ...input, maxFenceTests: this.maxFenceTests }, answer, fences }),
      { companyId, what: 'the dry run' },
      pages,
    );
    if (outcome.ok) return Buffer.from(outcome.json.buffer, outcome.json.byteOffset, outcome.json.byteLength);
    this.log.warn({ task: 'dryRun', companyId, limit: 'MONITORING_DRY_RUN_MAX_FENCE_TESTS' }, 'CPU task over budget');
    throw new AppError(
      'WORK_BUDGET_EXCEEDED',
      `the dry run needs more than ${outcome.maxFenceTests} geofence tests (MONITORING_DRY_RUN_MAX_FENCE_TESTS); ` +
        'choose a later since, or watch fewer or simpler geofences',
      { limit: 'MONITORING_DRY_RUN_MAX_FENCE_TESTS', max: outcome.maxFenceTests },
    );
  }

  /** The report as a PDF (src/history/pdf/render.ts), rendered whole on a thread within the time budget. */
  async renderHistoryPdf(report: HistoryReport, companyId: string): Promise<Buffer> {
    const bytes = await this.run<Uint8Array>('historyPdf', (port): HistoryPdfTask => ({ port, report }), {
      companyId,
      what: 'rendering the PDF',
    });
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  /**
   * Shutdown: tasks running or waiting are stopped and answer 503 at once (a client retries
   * elsewhere) instead of holding the shutdown for up to CPU_TASK_BUDGET_MS; later ones are
   * refused alike; then every thread stops. server/service.ts calls it before the HTTP server
   * closes, so requests waiting on the pool never meet the server's drain timeout.
   */
  async close(): Promise<void> {
    this.closing = true;
    for (const stop of this.running) stop();
    await this.piscina.destroy();
  }

  /**
   * Runs the task on a thread within the time budget; the items of `lists` follow it on its port
   * as they come (tasks.ts `receiveLists`). The budget counts computation only: it starts once the
   * thread has picked the task up and every list is sent.
   */
  private async run<T>(
    name: TaskName,
    task: (port: MessageChannel['port2']) => object,
    context: { companyId: string; what: string },
    lists: Record<string, AsyncIterable<unknown>> = {},
  ): Promise<T> {
    if (this.closing) throw shuttingDown();
    if (this.inFlight >= this.capacity) {
      throw new AppError(
        'SERVICE_UNAVAILABLE',
        `every CPU worker thread is busy and ${this.maxQueue} requests are waiting (CPU_POOL_QUEUE); retry later`,
        null,
        Math.ceil(this.budgetMs / 1000),
      );
    }
    const companyTasks = this.inFlightByCompany.get(context.companyId) ?? 0;
    if (companyTasks >= this.tasksPerCompany) {
      throw rateLimited(
        this.budgetMs / 1000,
        `${this.tasksPerCompany} of this company's CPU-heavy requests are already running or waiting ` +
          '(CPU_POOL_TASKS_PER_COMPANY); retry when one is done',
      );
    }
    const { port1, port2 } = new MessageChannel();
    const controller = new AbortController();
    let stoppedFor: 'budget' | 'shutdown' | null = null;
    const stop = (reason: 'budget' | 'shutdown') => {
      stoppedFor ??= reason;
      controller.abort();
    };
    let timer: NodeJS.Timeout | undefined;
    let settled = false;
    let awaited = 2;
    const startBudget = () => {
      if (--awaited === 0 && !settled) timer = setTimeout(() => stop('budget'), this.budgetMs);
    };
    port1.once('message', startBudget);
    const shutdown = () => stop('shutdown');
    this.running.add(shutdown);
    this.inFlight++;
    this.inFlightByCompany.set(context.companyId, companyTasks + 1);
    // Counted until the thread is done with it, even when the caller stopped waiting (a cancelled task).
    const running = this.piscina
      .run(task(port2), { name, signal: controller.signal, transferList: [port2] })
      .finally(() => {
        settled = true;
        this.inFlight--;
        const left = (this.inFlightByCompany.get(context.companyId) ?? 1) - 1;
        if (left === 0) this.inFlightByCompany.delete(context.companyId);
        else this.inFlightByCompany.set(context.companyId, left);
        this.running.delete(shutdown);
        clearTimeout(timer);
        port1.close();
      });
    let failed = false;
    running.catch(() => (failed = true));
    try {
      for (const [list, items] of Object.entries(lists)) {
        for await (const item of items) {
          if (failed) break;
          port1.postMessage({ list, item } satisfies ListMessage);
        }
      }
    } catch (error) {
      // A list failed: the thread drops the task when it reads this (its thread is kept).
      port1.postMessage({ cancel: true } satisfies ListMessage);
      throw error;
    }
    port1.postMessage({ done: true } satisfies ListMessage);
    startBudget();
    try {
      return (await running) as T;
    } catch (error) {
      if (stoppedFor === 'shutdown') throw shuttingDown();
      if (stoppedFor !== 'budget') throw error;
      this.log.warn({ task: name, companyId: context.companyId, limit: 'CPU_TASK_BUDGET_MS' }, 'CPU task over budget');
      throw new AppError(
        'WORK_BUDGET_EXCEEDED',
        `${context.what} needs more than ${this.budgetMs} ms of computation (CPU_TASK_BUDGET_MS); ask for less`,
        { limit: 'CPU_TASK_BUDGET_MS', max: this.budgetMs },
      );
    }
  }
}

/** The answer to a task stopped, or refused, because the process is shutting down. */
function shuttingDown(): AppError {
  return new AppError('SERVICE_UNAVAILABLE', 'the service is shutting down; retry', null, shutdownRetryAfterSeconds);
}
