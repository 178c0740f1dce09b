/**
 * What the CPU pool's threads run (src/cpu-pool/pool.ts): the module each worker thread loads,
 * compiled (dist/src/cpu-pool/tasks.js), one export per task. A task gets plain data (structured
 * clone: Dates survive, classes do not) and a port. On the port the thread says at once that it
 * started, so the caller's time budget never counts the wait for a thread; and the caller sends
 * the task's lists on it item by item as it reads them (`receiveLists`), then says they are done,
 * or that the task is cancelled (a list failed: the window is over its bound).
 */
import type { MessagePort } from 'node:worker_threads';
import { move, transferableSymbol, valueSymbol } from 'piscina';
import { eventsOfPage, readingsOfPage } from '../db/monitoring-history.js';
import type { HistoryReport } from '../history/types.js';
import { renderHistoryReportPdf } from '../history/pdf/render.js';
import {
  dryRunAnswer,
  dryRunMonitoring,
  FenceTestsExceeded,
  type DryRunAnswerContext,
  type DryRunInput,
} from '../monitoring/dry-run.js';
import { sharedGeofences, type SharedFences } from './shared-fences.js';

interface Task {
  port: MessagePort;
}

/** An item of one of a task's lists; the end of them; or the end of the task. */
export type ListMessage = { list: string; item: unknown } | { done: true } | { cancel: true };

export interface DryRunTask extends Task {
  input: Omit<DryRunInput, 'geofences' | 'samples' | 'events'>;
  answer: DryRunAnswerContext;
  fences: SharedFences;
}

/** The lists a dry run receives: the window's pages, JSON texts (db/monitoring-history.ts). */
export interface DryRunLists {
  readings: string[];
  events: string[];
}

/** The answer's `data` as UTF-8 JSON, or the geofence-test budget it ran past. */
export type DryRunOutcome = { ok: true; json: Uint8Array } | { ok: false; maxFenceTests: number };

export interface HistoryPdfTask extends Task {
  report: HistoryReport;
}

/**
 * Says the task started; then collects the items the caller sends until it says they are done
 * (null when it cancels the task instead).
 */
function receiveLists(port: MessagePort): Promise<Record<string, unknown[]> | null> {
  port.postMessage(null);
  const lists: Record<string, unknown[]> = {};
  return new Promise((resolve) => {
    port.on('message', (message: ListMessage) => {
      if ('list' in message) {
        (lists[message.list] ??= []).push(message.item);
        return;
      }
      port.close();
      resolve('done' in message ? lists : null);
    });
  });
}

/** A value whose buffers go to the caller's thread without a copy (piscina's transferable protocol). */
function moved<T extends object>(value: T, buffers: ArrayBuffer[]): T {
  return move({ [transferableSymbol]: buffers, [valueSymbol]: value }) as unknown as T;
}

/**
 * The whole dry run: parses the window's pages, replays them, and builds and serializes the
 * answer's `data` (the events' bodies: 18,000 events are 9 MB of JSON), all off the API's loop.
 */
export async function dryRun({ port, input, answer, fences }: DryRunTask): Promise<DryRunOutcome | null> {
  const lists = (await receiveLists(port)) as Partial<DryRunLists> | null;
  if (!lists) return null;
  const samples = (lists.readings ?? []).flatMap(readingsOfPage);
  const events = (lists.events ?? []).flatMap(eventsOfPage);
  let detections;
  try {
    detections = dryRunMonitoring({ ...input, samples, events, geofences: sharedGeofences(fences) });
  } catch (error) {
    if (error instanceof FenceTestsExceeded) return { ok: false, maxFenceTests: error.maxFenceTests };
    throw error;
  }
  // TextEncoder's array owns its whole buffer, so moving the buffer moves nothing else.
  const json = new TextEncoder().encode(
    JSON.stringify(dryRunAnswer(detections, { samples, vehicle: input.vehicle, now: input.now }, answer)),
  );
  return moved({ ok: true as const, json }, [json.buffer as ArrayBuffer]);
}

/** The whole PDF: complete before the first byte is sent, so a failure still answers an error envelope. */
export async function historyPdf({ port, report }: HistoryPdfTask): Promise<Uint8Array | null> {
  if (!(await receiveLists(port))) return null;
  const chunks: Buffer[] = [];
  for await (const chunk of renderHistoryReportPdf(report)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
