/**
 * What the CPU pool's threads run (src/cpu-pool/pool.ts): the module each worker thread loads,
 * compiled (dist/src/cpu-pool/tasks.js), one export per task. A task gets plain data (structured
 * clone: Dates survive, classes do not) and a port. On the port the thread says at once that it
 * started, so the caller's time budget counts computation only, not the wait for a thread; and
 * the caller sends the task's long lists on it in slices (`receiveLists`), so that copying them
 * never holds its event loop for long.
 */
import { on } from 'node:events';
import type { MessagePort } from 'node:worker_threads';
import type { HistoryReport } from '../history/types.js';
import { renderHistoryReportPdf } from '../history/pdf/render.js';
import type { RuleSample } from '../health/types.js';
import { dryRunMonitoring, FenceTestsExceeded, type DryRunInput } from '../monitoring/dry-run.js';
import type { Detection, EventSample } from '../monitoring/types.js';
import { sharedGeofences, type SharedFences } from './shared-fences.js';

interface Task {
  port: MessagePort;
}

/** A slice of one of a task's lists, or the end of them. */
export type ListMessage = { list: string; items: unknown[] } | { done: true };

export interface DryRunTask extends Task {
  input: Omit<DryRunInput, 'geofences' | 'samples' | 'events'>;
  fences: SharedFences;
}

/** The lists a dry run receives in slices. */
export interface DryRunLists {
  samples: RuleSample[];
  events: EventSample[];
}

export type DryRunOutcome = { ok: true; detections: Detection[] } | { ok: false; maxFenceTests: number };

export interface HistoryPdfTask extends Task {
  report: HistoryReport;
}

/** Says the task started; then collects the lists the caller sends until it says they are done. */
async function receiveLists(port: MessagePort): Promise<Record<string, unknown[]>> {
  port.postMessage(null);
  const lists: Record<string, unknown[]> = {};
  for await (const [message] of on(port, 'message') as AsyncIterable<[ListMessage]>) {
    if ('done' in message) break;
    const list = (lists[message.list] ??= []);
    for (const item of message.items) list.push(item);
  }
  port.close();
  return lists;
}

export async function dryRun({ port, input, fences }: DryRunTask): Promise<DryRunOutcome> {
  const { samples = [], events = [] } = (await receiveLists(port)) as Partial<DryRunLists>;
  try {
    return {
      ok: true,
      detections: dryRunMonitoring({ ...input, samples, events, geofences: sharedGeofences(fences) }),
    };
  } catch (error) {
    if (error instanceof FenceTestsExceeded) return { ok: false, maxFenceTests: error.maxFenceTests };
    throw error;
  }
}

/** The whole PDF: complete before the first byte is sent, so a failure still answers an error envelope. */
export async function historyPdf({ port, report }: HistoryPdfTask): Promise<Uint8Array> {
  await receiveLists(port);
  const chunks: Buffer[] = [];
  for await (const chunk of renderHistoryReportPdf(report)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
