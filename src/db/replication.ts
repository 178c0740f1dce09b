/**
 * Positions in the write-ahead log, for routing reads to streaming replicas (src/db/read-routing.ts).
 * node-postgres has no parser for `pg_lsn`, so positions travel as text (`X/Y`, hex) and are
 * compared in JS (lsnValue).
 */
import type { Queryable } from './pool.js';

/**
 * The primary's logical end of WAL. Read after COMMIT returns, it covers the commit record even
 * under `synchronous_commit = off` (the write position might not yet); being server-wide it may
 * overshoot a session's own commit, which only means a little more waiting for replicas.
 */
export async function readWalInsertLsn(q: Queryable): Promise<string> {
  const { rows } = await q.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn');
  return rows[0]!.lsn;
}

/** The primary's flushed end of WAL: what streaming replicas can have received so far. */
export async function readWalFlushLsn(q: Queryable): Promise<string> {
  const { rows } = await q.query<{ lsn: string }>('SELECT pg_current_wal_flush_lsn()::text AS lsn');
  return rows[0]!.lsn;
}

export interface ReplayPosition {
  /** How far the replica has replayed; null when the server is not in recovery (not a replica). */
  replayLsn: string | null;
  /**
   * Milliseconds since the primary committed the last transaction the replica replayed, on the
   * replica's clock: an upper bound of its staleness, but one that also grows while the primary is
   * idle. Null before the replica has replayed any transaction.
   */
  replayAgeMs: number | null;
}

/** One replica's replay position. */
export async function readReplayPosition(q: Queryable): Promise<ReplayPosition> {
  const { rows } = await q.query<ReplayPosition>(
    `SELECT pg_last_wal_replay_lsn()::text AS "replayLsn",
            (extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp()) * 1000)::float8 AS "replayAgeMs"`,
  );
  return rows[0]!;
}

/** An LSN's text form (`16/B374D848`) as the 64-bit position it names. */
export function lsnValue(lsn: string): bigint {
  const [high, low] = lsn.split('/');
  if (high === undefined || low === undefined || !/^[0-9A-Fa-f]{1,8}$/.test(high) || !/^[0-9A-Fa-f]{1,8}$/.test(low)) {
    throw new Error(`not an LSN: "${lsn}"`);
  }
  return (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`);
}
