/**
 * Poison isolation: one row that cannot be processed never blocks other rows, connections or
 * tenants. A batch that fails is processed again row by row, each row in its own transaction;
 * a row that still fails on its own is parked with its error (never picked again until a replay
 * succeeds) and the others are stored. A transient failure (lost connection, deadlock, the
 * database shutting down) says nothing about the rows: it propagates and the job is retried.
 */
import type { ProviderAdapter } from '../../providers/types.js';
import { lockPendingInboxRows, parkInboxRow, type ParkedRow } from '../db/inbox.js';
import { withTransaction, type Pool } from '../db/pool.js';
import { batchRows, processInbox, processInboxRows, type IngestOutcome } from './process-inbox.js';
import { storableText } from './sanitize.js';

export interface ParkedOutcome extends ParkedRow {
  error: string;
}

export interface IsolatedOutcome extends IngestOutcome {
  parked: ParkedOutcome[];
  /** The batch failed and its rows were processed one by one: why it failed (describeError), else null. */
  isolatedBy: string | null;
  /** Rows the batch locked: fewer than it asked for when no more were pending (or free to take). */
  claimed: number;
}

/**
 * SQLSTATE classes of failures that are not the row's: 08 connection, 40 transaction rollback
 * (deadlock, serialization), 53 insufficient resources, 57P operator intervention (shutdown; a
 * statement timeout, 57014, is the row's: it is too costly), 58 system error; 55P03 lock timeout.
 */
const transientStates = /^(?:08|40|53|57P|58)|^55P03$/;
const socketErrors: ReadonlySet<string> = new Set(['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE']);
// node-postgres reports a lost connection or a pool timeout without a SQLSTATE.
const connectionMessages = /connection terminated|connection error|timeout exceeded when trying to connect/i;

export function isTransientError(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && (transientStates.test(code) || socketErrors.has(code))) return true;
  return typeof message === 'string' && connectionMessages.test(message);
}

/** Longest error text kept on a parked row. */
const maxErrorChars = 1000;

/** What a parked row shows the operator: the SQLSTATE when there is one, and the message. */
export function describeError(error: unknown): string {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  const text = typeof message === 'string' && message ? message : String(error);
  const described = typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? `${code} ${text}` : text;
  return storableText(described).slice(0, maxErrorChars);
}

export function mergeOutcomes(outcomes: readonly IngestOutcome[]): IngestOutcome {
  return {
    rows: outcomes.flatMap((o) => o.rows),
    changedVehicleIds: [...new Set(outcomes.flatMap((o) => o.changedVehicleIds))],
    cascadeVehicleIds: [...new Set(outcomes.flatMap((o) => o.cascadeVehicleIds))],
    owedIds: outcomes.flatMap((o) => o.owedIds),
  };
}

const nothing: IngestOutcome = { rows: [], changedVehicleIds: [], cascadeVehicleIds: [], owedIds: [] };

/**
 * One row in its own transaction; a failure of its own parks it. `includeProcessed` re-processes
 * a processed or parked row (replay).
 */
export async function processRowAlone(
  pool: Pool,
  inboxId: number,
  adapters: Readonly<Record<string, ProviderAdapter>>,
  includeProcessed: boolean,
): Promise<{ outcome: IngestOutcome; parked: ParkedOutcome | null }> {
  try {
    const outcome = await withTransaction(pool, (tx) =>
      processInbox(tx, inboxId, adapters, { includeProcessed, batch: false }),
    );
    return { outcome, parked: null };
  } catch (error) {
    if (isTransientError(error)) throw error;
    const text = describeError(error);
    const row = await parkInboxRow(pool, inboxId, text);
    return { outcome: nothing, parked: row ? { ...row, error: text } : null };
  }
}

/** One batch of a drain: the oldest pending rows in one transaction, isolated on failure. */
export async function ingestInboxBatch(
  pool: Pool,
  adapters: Readonly<Record<string, ProviderAdapter>>,
): Promise<IsolatedOutcome> {
  let picked: number[] = [];
  try {
    const outcome = await withTransaction(pool, async (tx) => {
      const rows = await lockPendingInboxRows(tx, batchRows);
      picked = rows.map((row) => row.id);
      return processInboxRows(tx, rows, adapters);
    });
    return { ...outcome, parked: [], isolatedBy: null, claimed: picked.length };
  } catch (error) {
    if (isTransientError(error) || picked.length === 0) throw error;
    const outcomes: IngestOutcome[] = [];
    const parked: ParkedOutcome[] = [];
    for (const id of picked) {
      const alone = await processRowAlone(pool, id, adapters, false);
      outcomes.push(alone.outcome);
      if (alone.parked) parked.push(alone.parked);
    }
    return { ...mergeOutcomes(outcomes), parked, isolatedBy: describeError(error), claimed: picked.length };
  }
}
