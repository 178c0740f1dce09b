/**
 * The API's pool of worker threads for CPU-heavy requests (issue 16): a dry run over stored
 * history and a report PDF run here, off the event loop, so `/healthz` and every other request
 * keep being answered while they compute. Piscina underneath; each API process owns one pool
 * (created with the app's deps, destroyed when the app closes).
 *
 * Bounds, each answered in the error envelope, never a stall:
 * - time: a task computes at most CPU_TASK_BUDGET_MS on its thread (from the moment it starts
 *   there); then its thread is stopped (piscina terminates it and starts another on demand) and
 *   the request answers 422 WORK_BUDGET_EXCEEDED naming the limit;
 * - work: a dry run runs at most MONITORING_DRY_RUN_MAX_FENCE_TESTS geofence tests (same answer);
 * - queue: at most CPU_POOL_QUEUE tasks wait for a thread; one more answers 503 with Retry-After.
 *
 * Threads are started on demand and stopped after `idleTimeoutMs`, at a lower CPU priority
 * (`niceIncrement`) so the event loop's thread wins the cores when both want them.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { Config } from '../config.js';
import { AppError } from '../errors.js';
import type { HistoryReport } from '../history/types.js';
import type { Logger } from '../log.js';
import type { DryRunInput } from '../monitoring/dry-run.js';
import type { Detection } from '../monitoring/types.js';
import { projectRoot } from '../paths.js';
import { SharedFenceCache, type GeofenceText, type SharedFences } from './shared-fences.js';
import type { DryRunLists, DryRunOutcome, DryRunTask, HistoryPdfTask, ListMessage } from './tasks.js';

/** A thread idle this long is stopped (the next task starts one again, in about 100 ms). */
const idleTimeoutMs = 60_000;
/** Added to the threads' nice value: below the event loop's priority, so probes stay fast under load. */
const niceIncrement = 10;
/** Items of a task's list copied to its thread between two turns of the event loop (a few ms of copying). */
const itemsPerSlice = 5000;

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
  private readonly maxFenceTests: number;
  private readonly fences = new SharedFenceCache();

  constructor(
    config: Pick<Config, 'cpuPoolThreads' | 'cpuPoolQueue' | 'cpuTaskBudgetMs' | 'monitoringDryRunMaxFenceTests'>,
    private readonly log: Logger,
  ) {
    this.budgetMs = config.cpuTaskBudgetMs;
    this.maxQueue = config.cpuPoolQueue;
    this.capacity = config.cpuPoolThreads + config.cpuPoolQueue;
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
   * `load` reads them when this process has not shared that version yet (src/cpu-pool/shared-fences.ts).
   */
  sharedFences(ids: readonly string[], load: () => Promise<GeofenceText[]>): Promise<SharedFences> {
    return this.fences.get(ids, load);
  }

  /** The events of a dry run (src/monitoring/dry-run.ts) over these fences, computed on a thread within the budgets. */
  async dryRun(
    input: Omit<DryRunInput, 'geofences' | 'maxFenceTests'>,
    fences: SharedFences,
    companyId: string,
  ): Promise<Detection[]> {
    const { samples, events, ...rest } = input;
    const outcome = await this.run<DryRunOutcome>(
      'dryRun',
      (port): DryRunTask => ({ port, input: { ...rest, maxFenceTests: this.maxFenceTests }, fences }),
      { companyId, what: 'the dry run' },
      { samples, events } satisfies { [K in keyof DryRunLists]: readonly DryRunLists[K][number][] },
    );
    if (outcome.ok) return outcome.detections;
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

  /** Stops every thread (a task still running is rejected); the app's onClose, after in-flight requests. */
  async close(): Promise<void> {
    await this.piscina.destroy();
  }

  /**
   * Runs the task on a thread within the time budget; `lists` follow it on its port in slices
   * (tasks.ts `receiveLists`), with turns of the event loop in between.
   */
  private async run<T>(
    name: TaskName,
    task: (port: MessageChannel['port2']) => object,
    context: { companyId: string; what: string },
    lists: Record<string, readonly unknown[]> = {},
  ): Promise<T> {
    if (this.inFlight >= this.capacity) {
      throw new AppError(
        'SERVICE_UNAVAILABLE',
        `every CPU worker thread is busy and ${this.maxQueue} requests are waiting (CPU_POOL_QUEUE); retry later`,
        null,
        Math.ceil(this.budgetMs / 1000),
      );
    }
    this.inFlight++;
    const { port1, port2 } = new MessageChannel();
    const controller = new AbortController();
    let settled = false;
    let overBudget = false;
    let timer: NodeJS.Timeout | undefined;
    // The budget starts when the thread picks the task up, not while it waits in the queue.
    port1.once('message', () => {
      if (settled) return;
      timer = setTimeout(() => {
        overBudget = true;
        controller.abort();
      }, this.budgetMs);
    });
    try {
      const running = this.piscina.run(task(port2), { name, signal: controller.signal, transferList: [port2] });
      // Its failure is awaited below, once the lists are sent (or as soon as it fails).
      let failed = false;
      running.catch(() => (failed = true));
      for (const [list, items] of Object.entries(lists)) {
        for (let i = 0; i < items.length && !failed; i += itemsPerSlice) {
          port1.postMessage({ list, items: items.slice(i, i + itemsPerSlice) } satisfies ListMessage);
          await yieldToLoop();
        }
      }
      port1.postMessage({ done: true } satisfies ListMessage);
      return (await running) as T;
    } catch (error) {
      if (!overBudget) throw error;
      this.log.warn({ task: name, companyId: context.companyId, limit: 'CPU_TASK_BUDGET_MS' }, 'CPU task over budget');
      throw new AppError(
        'WORK_BUDGET_EXCEEDED',
        `${context.what} needs more than ${this.budgetMs} ms of computation (CPU_TASK_BUDGET_MS); ask for less`,
        { limit: 'CPU_TASK_BUDGET_MS', max: this.budgetMs },
      );
    } finally {
      this.inFlight--;
      settled = true;
      clearTimeout(timer);
      port1.close();
    }
  }
}
