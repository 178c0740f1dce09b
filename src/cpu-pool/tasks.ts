/**
 * What the CPU pool's threads run (src/cpu-pool/pool.ts): the module each worker thread loads,
 * compiled (dist/src/cpu-pool/tasks.js), one export per task. A task gets plain data (structured
 * clone: Dates survive, classes do not) and a port on which it says at once that it started, so
 * the caller's time budget counts computation only, not the wait for a thread.
 */
import type { MessagePort } from 'node:worker_threads';
import type { HistoryReport } from '../history/types.js';
import { renderHistoryReportPdf } from '../history/pdf/render.js';
import { dryRunMonitoring, FenceTestsExceeded, type DryRunInput } from '../monitoring/dry-run.js';
import type { Detection } from '../monitoring/types.js';
import { sharedGeofences, type SharedFences } from './shared-fences.js';

interface Task {
  /** Receives one message when the task starts running on its thread. */
  started: MessagePort;
}

export interface DryRunTask extends Task {
  input: Omit<DryRunInput, 'geofences'>;
  fences: SharedFences;
}

export type DryRunOutcome = { ok: true; detections: Detection[] } | { ok: false; maxFenceTests: number };

export interface HistoryPdfTask extends Task {
  report: HistoryReport;
}

function announce(started: MessagePort): void {
  started.postMessage(null);
  started.close();
}

export function dryRun({ started, input, fences }: DryRunTask): DryRunOutcome {
  announce(started);
  try {
    return { ok: true, detections: dryRunMonitoring({ ...input, geofences: sharedGeofences(fences) }) };
  } catch (error) {
    if (error instanceof FenceTestsExceeded) return { ok: false, maxFenceTests: error.maxFenceTests };
    throw error;
  }
}

/** The whole PDF: complete before the first byte is sent, so a failure still answers an error envelope. */
export async function historyPdf({ started, report }: HistoryPdfTask): Promise<Uint8Array> {
  announce(started);
  const chunks: Buffer[] = [];
  for await (const chunk of renderHistoryReportPdf(report)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
