/**
 * Routes the public API's reads to streaming replicas (DATABASE_REPLICA_URLS) without ever showing
 * an API key less than it wrote, after GitLab's database load balancer:
 * - after a write, the key's position in the primary's WAL is kept in Redis (shared by every API
 *   process) for `stickyMs`;
 * - a read of that key goes to a replica whose replay position has reached it, else to the primary;
 * - a replica further behind than DATABASE_REPLICA_MAX_LAG_MS, unreachable, or not in recovery at
 *   all is skipped; with none left, reads use the primary;
 * - a read that fails on a replica for the replica's sake (connection lost, refused, a recovery
 *   conflict) runs again on the primary, so stopping a replica fails no request.
 * docs/scaling.md "Read replicas" describes it for operators.
 */
import pg from 'pg';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import { createPool, type Pool, type PoolClient, type PoolTimeouts } from './pool.js';
import { lsnValue, readReplayPosition, readWalFlushLsn, readWalInsertLsn } from './replication.js';

export const replicaStates = ['starting', 'in_use', 'lagging', 'unreachable', 'not_a_replica'] as const;
export type ReplicaState = (typeof replicaStates)[number];

export interface ReplicaStatus {
  /** host:port, never the credentials. */
  name: string;
  state: ReplicaState;
  /** Upper bound of its staleness at the last check; null when unknown (unreachable, never checked). */
  lagMs: number | null;
  replayLsn: string | null;
  checkedAt: Date | null;
  /** Why it is unreachable or not a replica. */
  error: string | null;
}

interface Replica {
  name: string;
  /** Reads, falling back to the primary (readsFallingBack). */
  pool: Pool;
  /** One connection for the checks, bounded by the check interval, so a busy read pool never delays them. */
  probe: Pool;
  state: ReplicaState;
  replayLsn: bigint | null;
  lagMs: number | null;
  checkedAt: number | null;
  error: string | null;
  /** The check in flight: concurrent callers share it. */
  checking: Promise<void> | null;
}

/** A primary position seen at a moment: a replica that has replayed it is at most that old. */
interface Sample {
  at: number;
  lsn: bigint;
}

/** Where this process's reads went since it started, and its replicas as last checked. */
export interface ReadRouting {
  readsToPrimary: number;
  readsToReplicas: number;
  replicas: ReplicaStatus[];
}

export type ReadRoutingConfig = Pick<
  Config,
  | 'databaseReplicaUrls'
  | 'databaseReplicaMaxLagMs'
  | 'databaseReplicaCheckIntervalMs'
  | 'databasePoolSize'
  | 'redisPrefix'
  | keyof PoolTimeouts
>;

/** What the router needs of a Redis connection (ioredis, one node or a cluster): reads and one script. */
export interface RoutingRedis {
  get(key: string): Promise<string | null>;
  defineCommand(name: string, definition: { numberOfKeys: number; lua: string }): void;
}

export interface ReadRoutingDeps {
  config: ReadRoutingConfig;
  primary: Pool;
  redis: RoutingRedis;
  log: Logger;
  metrics: Pick<Metrics, 'replicaLag' | 'replicaInUse' | 'readsRouted' | 'replicaFallbacks'>;
  now?: () => number;
}

// Keeps the larger of the stored and the given position (both 16 hex digits, so the string order
// is the numeric one): two writes of one key finishing out of order must not lower it.
const recordScript = `
local current = redis.call('GET', KEYS[1])
if current and current >= ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
else
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
end
return 1`;

interface RecordScript {
  fleetRecordWriteLsn(key: string, lsn: string, ttlMs: number): Promise<number>;
}

/** The position past every real one: reads of the key use the primary until it expires. */
const unknownPosition = 0xffff_ffff_ffff_ffffn;

const hex16 = (lsn: bigint) => lsn.toString(16).padStart(16, '0');

/** node-postgres's own messages for a connection that failed, closed or timed out. */
const connectionFailure =
  /^Connection terminated|^timeout exceeded when trying to connect|^Query read timeout|is not queryable$/;
/**
 * SQLSTATEs that say the replica, not the statement, failed: connection exceptions (08…), the
 * server shutting down or starting (57P01–57P03), a query cancelled by a recovery conflict
 * (40001, 40P01), and a database the replica has not replayed yet (3D000).
 */
const replicaCodes = new Set(['57P01', '57P02', '57P03', '40001', '40P01', '3D000']);

/** True when a read failed because of the replica it ran on, so the primary can answer it instead. */
export function isReplicaFailure(error: unknown): boolean {
  if (error instanceof pg.DatabaseError) {
    const code = error.code ?? '';
    return code.startsWith('08') || replicaCodes.has(code);
  }
  if (!(error instanceof Error)) return false;
  const code = (error as NodeJS.ErrnoException).code;
  return (typeof code === 'string' && /^E[A-Z]+$/.test(code)) || connectionFailure.test(error.message);
}

/**
 * Makes the replica's pool answer a read that fails for the replica's sake from the primary
 * instead. Promise-style `query` and `connect` only (all this code base uses); a failure inside a
 * transaction taken with `connect` is not retried. The pool's own `query` calls `connect` with a
 * callback: that form stays as it is, and its failures reach the `query` above.
 */
function readsFallingBack(replica: Pool, primary: Pool, failed: (error: unknown) => void): Pool {
  type Query = (...args: unknown[]) => Promise<unknown>;
  type Connect = (callback?: unknown) => Promise<PoolClient> | undefined;
  const query = replica.query.bind(replica) as Query;
  const connect = replica.connect.bind(replica) as Connect;
  return Object.assign(replica, {
    query: async (...args: unknown[]) => {
      try {
        return await query(...args);
      } catch (error) {
        if (!isReplicaFailure(error)) throw error;
        failed(error);
        return (primary.query as Query)(...args);
      }
    },
    connect: (callback?: unknown) => {
      if (callback) return connect(callback);
      return connect()!.catch((error: unknown) => {
        if (!isReplicaFailure(error)) throw error;
        failed(error);
        return primary.connect();
      });
    },
  });
}

function replicaName(url: string): string {
  const parsed = new URL(url);
  return `${parsed.hostname}:${parsed.port || '5432'}`;
}

export class ReadRouter {
  private readonly replicas: Replica[];
  private readonly primary: Pool;
  private readonly now: () => number;
  private readonly maxLagMs: number;
  private readonly intervalMs: number;
  /**
   * How long a key's last write is kept: well past the oldest write a replica in use may lack (its
   * lag, plus the age of its last check), and at least 30 s as GitLab keeps it, so that a replica's
   * clock running behind the primary's (which shortens the measured lag) cannot undo it.
   */
  readonly stickyMs: number;
  private readonly samples: Sample[] = [];
  private readonly scripts: RecordScript;
  private timer: NodeJS.Timeout | null = null;
  private checking: Promise<void> | null = null;
  private closed = false;
  private turn = 0;
  /** Logged once when Redis fails a read, not once per request. */
  private redisFailing = false;

  constructor(private readonly deps: ReadRoutingDeps) {
    const { config } = deps;
    this.primary = deps.primary;
    this.now = deps.now ?? Date.now;
    this.maxLagMs = config.databaseReplicaMaxLagMs;
    this.intervalMs = config.databaseReplicaCheckIntervalMs;
    this.stickyMs = Math.max(30_000, this.maxLagMs + 4 * this.intervalMs);
    this.replicas = config.databaseReplicaUrls.map((url) => {
      const name = replicaName(url);
      const replica: Replica = {
        name,
        pool: readsFallingBack(createPool(url, config.databasePoolSize, deps.log, config), deps.primary, (error) =>
          this.failed(replica, error),
        ),
        probe: createPool(
          url,
          1,
          deps.log,
          { ...config, databaseConnectTimeoutMs: this.intervalMs, databaseStatementTimeoutMs: this.intervalMs },
          this.intervalMs,
        ),
        state: 'starting',
        replayLsn: null,
        lagMs: null,
        checkedAt: null,
        error: null,
        checking: null,
      };
      return replica;
    });
    if (this.replicas.length > 0)
      deps.redis.defineCommand('fleetRecordWriteLsn', { numberOfKeys: 1, lua: recordScript });
    this.scripts = deps.redis as unknown as RecordScript;
  }

  get enabled(): boolean {
    return this.replicas.length > 0;
  }

  /** Checks every replica once, then every DATABASE_REPLICA_CHECK_INTERVAL_MS until close. */
  async start(): Promise<void> {
    if (!this.enabled) return;
    await this.check();
    this.schedule();
  }

  private schedule(): void {
    if (this.closed) return;
    this.timer = setTimeout(() => {
      void this.check().finally(() => this.schedule());
    }, this.intervalMs);
    this.timer.unref();
  }

  /** Where the reads of one request of this API key go: a replica that has its last write, or the primary. */
  async poolFor(keyId: string): Promise<Pool> {
    if (!this.enabled) return this.primary;
    const usable = this.replicas.filter((replica) => this.usable(replica));
    if (usable.length === 0) return this.routed(this.primary, 'primary');
    let written: bigint | null;
    try {
      const stored = await this.deps.redis.get(this.key(keyId));
      written = stored === null ? null : BigInt(`0x${stored}`);
      if (this.redisFailing) this.deps.log.info('Redis answers again: reads go to replicas again');
      this.redisFailing = false;
    } catch (err) {
      // Without Redis the key's last write is unknown: only the primary surely has it.
      if (!this.redisFailing) this.deps.log.warn({ err }, 'reads routed to the primary while Redis is unreachable');
      this.redisFailing = true;
      return this.routed(this.primary, 'primary');
    }
    const hasWrite = (replica: Replica) => written === null || (replica.replayLsn ?? -1n) >= written;
    let ready = usable.filter(hasWrite);
    if (ready.length === 0 && written !== unknownPosition) {
      // Positions are as of the last check; a fresh one (shared by concurrent reads) may find a
      // replica that has since replayed the write.
      await Promise.all(usable.map((replica) => this.checkReplica(replica)));
      ready = usable.filter((replica) => this.usable(replica) && hasWrite(replica));
    }
    if (ready.length === 0) return this.routed(this.primary, 'primary');
    const replica = ready[this.turn++ % ready.length]!;
    return this.routed(replica.pool, replica.name);
  }

  /**
   * Called after a write of this API key committed, before its answer leaves: later reads of the
   * key use only what has replayed it. Never throws: the write stands whatever happens here.
   */
  async recordWrite(keyId: string): Promise<void> {
    if (!this.enabled) return;
    let position: bigint;
    try {
      position = lsnValue(await readWalInsertLsn(this.primary));
    } catch (err) {
      this.deps.log.warn({ err }, 'primary WAL position unknown after a write: the key reads from the primary');
      position = unknownPosition;
    }
    try {
      await this.scripts.fleetRecordWriteLsn(this.key(keyId), hex16(position), this.stickyMs);
    } catch (err) {
      // Reads of the key then find Redis unreachable too, and use the primary.
      this.deps.log.warn({ err }, 'write position not recorded: Redis unreachable');
    }
  }

  async routing(): Promise<ReadRouting> {
    const { values } = await this.deps.metrics.readsRouted.get();
    const toPrimary = values.find((value) => value.labels.target === 'primary')?.value ?? 0;
    const total = values.reduce((sum, value) => sum + value.value, 0);
    return { readsToPrimary: toPrimary, readsToReplicas: total - toPrimary, replicas: this.status() };
  }

  private status(): ReplicaStatus[] {
    return this.replicas.map((replica) => ({
      name: replica.name,
      state: replica.state,
      lagMs: replica.lagMs,
      replayLsn: replica.replayLsn === null ? null : formatLsn(replica.replayLsn),
      checkedAt: replica.checkedAt === null ? null : new Date(replica.checkedAt),
      error: replica.error,
    }));
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.checking;
    await Promise.all(this.replicas.flatMap((replica) => [replica.pool.end(), replica.probe.end()]));
  }

  private key(keyId: string): string {
    return `${this.deps.config.redisPrefix}:write-lsn:${keyId}`;
  }

  private routed(pool: Pool, target: string): Pool {
    this.deps.metrics.readsRouted.inc({ target });
    return pool;
  }

  /** In use, and checked recently enough that its lag still bounds what it lacks. */
  private usable(replica: Replica): boolean {
    return (
      replica.state === 'in_use' && replica.checkedAt !== null && this.now() - replica.checkedAt <= 3 * this.intervalMs
    );
  }

  /**
   * One round: the primary's durable position first, as the mark each replica's lag is measured
   * by (what replicas can receive: never past the flushed WAL).
   */
  private check(): Promise<void> {
    this.checking ??= (async () => {
      try {
        const lsn = lsnValue(await readWalFlushLsn(this.primary));
        this.samples.push({ at: this.now(), lsn });
        // Older samples than the largest lag that matters cannot change a decision.
        const horizon = this.now() - this.maxLagMs - 4 * this.intervalMs;
        while (this.samples.length > 1 && this.samples[0]!.at < horizon) this.samples.shift();
      } catch (err) {
        this.deps.log.warn({ err }, 'replica check: primary WAL position unknown; lags measured by replay time only');
      }
      await Promise.all(this.replicas.map((replica) => this.checkReplica(replica)));
    })().finally(() => {
      this.checking = null;
    });
    return this.checking;
  }

  private checkReplica(replica: Replica): Promise<void> {
    replica.checking ??= (async () => {
      const before = replica.state;
      try {
        const position = await readReplayPosition(replica.probe);
        if (position.replayLsn === null) {
          this.mark(replica, 'not_a_replica', null, 'not in recovery: a primary, not a streaming replica');
        } else {
          const replayed = lsnValue(position.replayLsn);
          if (replica.replayLsn === null || replayed > replica.replayLsn) replica.replayLsn = replayed;
          const lagMs = this.lagOf(replayed, position.replayAgeMs);
          this.mark(replica, lagMs !== null && lagMs <= this.maxLagMs ? 'in_use' : 'lagging', lagMs, null);
        }
      } catch (err) {
        this.mark(replica, 'unreachable', null, (err as Error).message);
      }
      if (replica.state !== before) {
        this.deps.log.info(
          { replica: replica.name, state: replica.state, lagMs: replica.lagMs, error: replica.error },
          'read replica state changed',
        );
      }
    })().finally(() => {
      replica.checking = null;
    });
    return replica.checking;
  }

  /**
   * The lower of two upper bounds of how much older the replica's view is than the primary's:
   * the age of the last transaction it replayed (too high while the primary is idle), and the age
   * of the newest primary position it has replayed (only as fine as the check interval).
   */
  private lagOf(replayed: bigint, replayAgeMs: number | null): number | null {
    let sampleLag: number | null = null;
    for (let i = this.samples.length - 1; i >= 0; i--) {
      if (this.samples[i]!.lsn <= replayed) {
        sampleLag = Math.max(0, this.now() - this.samples[i]!.at);
        break;
      }
    }
    const bounds = [sampleLag, replayAgeMs === null ? null : Math.max(0, replayAgeMs)].filter(
      (bound): bound is number => bound !== null,
    );
    if (bounds.length > 0) return Math.round(Math.min(...bounds));
    // Behind every sample still kept: at least as far behind as the oldest.
    const oldest = this.samples[0];
    return oldest ? this.now() - oldest.at : null;
  }

  private mark(replica: Replica, state: ReplicaState, lagMs: number | null, error: string | null): void {
    replica.state = state;
    replica.lagMs = lagMs;
    replica.error = error;
    replica.checkedAt = this.now();
    const labels = { replica: replica.name };
    if (lagMs === null) this.deps.metrics.replicaLag.remove(labels);
    else this.deps.metrics.replicaLag.set(labels, lagMs / 1000);
    this.deps.metrics.replicaInUse.set(labels, state === 'in_use' ? 1 : 0);
  }

  /** A read failed on the replica: no more reads go there until a check reaches it again. */
  private failed(replica: Replica, error: unknown): void {
    this.deps.metrics.replicaFallbacks.inc({ replica: replica.name });
    if (replica.state === 'unreachable') return;
    this.mark(replica, 'unreachable', null, (error as Error).message);
    this.deps.log.warn({ replica: replica.name, err: error }, 'read replica failed: its reads go to the primary');
  }
}

function formatLsn(lsn: bigint): string {
  return `${(lsn >> 32n).toString(16).toUpperCase()}/${(lsn & 0xffff_ffffn).toString(16).toUpperCase()}`;
}
