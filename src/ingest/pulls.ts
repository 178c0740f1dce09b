/**
 * Pulling from providers: a connection's change feed on a schedule, and one vehicle on demand
 * (refresh). Each page goes into the inbox exactly like a push; the feed cursor moves in the same
 * transaction that stores its page, so a crash never skips or repeats a page's worth of data. No
 * transaction stays open while a provider answers: a feed is claimed with a short lease instead.
 */
import type { ProviderHttp } from '../../providers/types.js';
import { feedProviders, isProviderId, pullClients } from '../../providers/index.js';
import type { ProviderConfig, PullContext, PullOutcome } from '../../providers/types.js';
import type { Config } from '../config.js';
import { insertInboxRow } from '../db/inbox.js';
import { withTransaction, type Pool } from '../db/pool.js';
import {
  claimFeedPull,
  findProviderConnection,
  listActiveConnections,
  recordPull,
  releaseFeedPull,
} from '../db/provider-connections.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics.js';
import type { Queues } from '../queue/queues.js';
import { decryptJson } from '../security/secrets.js';
import { pullsFeed } from './connection-config.js';
import { enqueueInboxRows } from '../queue/enqueue-ingest.js';
import { enqueueAfterCommit } from '../queue/after-commit.js';
import { guardedProviderHttp } from './provider-http.js';

export interface PullDeps {
  pool: Pool;
  queues: Queues;
  secretsKey: Buffer;
  log: Logger;
  metrics: Metrics;
  now: () => Date;
  /** The guarded provider HTTP client (provider-http.ts). */
  http: ProviderHttp;
  /** Provider sessions kept between pulls of this process (PullContext.sessions). */
  sessions: Map<string, unknown>;
}

/** A pull worker's dependencies: provider requests guarded by WEBHOOK_ALLOW_NETS, one session cache per process. */
export function createPullDeps(deps: {
  config: Config;
  pool: Pool;
  queues: Queues;
  log: Logger;
  metrics: Metrics;
  now: () => Date;
}): PullDeps {
  return {
    pool: deps.pool,
    queues: deps.queues,
    log: deps.log,
    metrics: deps.metrics,
    now: deps.now,
    secretsKey: deps.config.secretsKey,
    http: guardedProviderHttp({ allowNets: deps.config.webhookAllowNets }),
    sessions: new Map(),
  };
}

function contextOf(deps: PullDeps, now: Date): PullContext {
  return { http: deps.http, now, sessions: deps.sessions };
}

/** Pages pulled per job at most; the next scheduled run continues from the stored cursor. */
const maxPagesPerPull = 20;
/** After a failed pull the connection rests this long before the next try. */
const failureBackoffMs = 60_000;
/** A claimed feed page: longer than a provider request may take (30 s), so a crashed pull frees it soon. */
const pullLeaseMs = 2 * 60_000;

export interface FeedPullResult {
  pages: number;
  inboxIds: number[];
  /** waiting: backing off, or another pull holds the feed. */
  outcome: 'done' | 'waiting' | 'rate_limited' | 'failed' | 'inactive';
}

type PullStep = { outcome: FeedPullResult['outcome'] | 'more'; inboxId?: number };

export async function pullFeed(deps: PullDeps, connectionId: string): Promise<FeedPullResult> {
  const inboxIds: number[] = [];
  for (let page = 0; page < maxPagesPerPull; page++) {
    const step = await pullFeedPage(deps, connectionId);
    if (step.inboxId !== undefined) {
      const inboxId = step.inboxId;
      inboxIds.push(inboxId);
      await enqueueAfterCommit(deps.log, 'ingest.recover', () => enqueueInboxRows(deps.queues, [inboxId]), { inboxId });
    }
    if (step.outcome !== 'more') return { pages: inboxIds.length, inboxIds, outcome: step.outcome };
  }
  return { pages: inboxIds.length, inboxIds, outcome: 'done' };
}

/**
 * One page: claim the feed (a short lease), ask the provider with no transaction open, then store
 * the page and move the cursor in one transaction.
 */
async function pullFeedPage(deps: PullDeps, connectionId: string): Promise<PullStep> {
  const now = deps.now();
  const leaseUntil = new Date(now.getTime() + pullLeaseMs);
  const connection = await claimFeedPull(deps.pool, connectionId, now, leaseUntil);
  if (!connection) {
    const exists = await findProviderConnection(deps.pool, connectionId);
    return { outcome: exists?.active ? 'waiting' : 'inactive' };
  }
  const client = pullClients[connection.provider as keyof typeof pullClients];
  if (!client?.pullFeed) return { outcome: 'inactive' };
  const config = decryptJson<ProviderConfig>(deps.secretsKey, connection.configCiphertext);
  const pulled: PullOutcome = await client.pullFeed(config, connection.pullCursor, contextOf(deps, now));
  if (!pulled.ok) {
    const waitMs = pulled.kind === 'rate_limited' ? pulled.retryAfterMs : failureBackoffMs;
    const error = pulled.kind === 'rate_limited' ? `rate limited; retrying after ${waitMs} ms` : pulled.message;
    await recordPull(deps.pool, connection.id, {
      cursor: connection.pullCursor,
      at: now,
      error,
      nextPullAt: new Date(now.getTime() + waitMs),
    });
    deps.metrics.pulls.inc({ provider: connection.provider, outcome: pulled.kind });
    return { outcome: pulled.kind };
  }
  try {
    const inboxId = await withTransaction(deps.pool, async (tx) => {
      const row = await insertInboxRow(tx, {
        connectionId: connection.id,
        provider: connection.provider,
        contentType: pulled.page.contentType,
        payload: pulled.page.body,
        cascade: true,
        refreshId: null,
      });
      await recordPull(tx, connection.id, { cursor: pulled.page.nextCursor, at: now, error: null, nextPullAt: null });
      return row.id;
    });
    deps.metrics.pulls.inc({ provider: connection.provider, outcome: 'page' });
    deps.metrics.inboxAccepted.inc({ provider: connection.provider });
    return { outcome: pulled.page.hasMore ? 'more' : 'done', inboxId };
  } catch (error) {
    // Nothing was stored and the cursor did not move; the next run asks for the same page.
    await releaseFeedPull(deps.pool, connection.id, leaseUntil).catch(() => {});
    throw error;
  }
}

const schedulerPrefix = 'pull-';

/** The job scheduler that pulls one connection's feed. */
export function pullSchedulerId(connectionId: string): string {
  return `${schedulerPrefix}${connectionId}`;
}

/** Creates or updates the job scheduler that pulls one connection's feed. */
export async function schedulePullFeed(
  queues: Queues,
  connection: { id: string; pullIntervalSeconds: number },
): Promise<void> {
  await queues.schedule(
    'pull.feed',
    connection.pullIntervalSeconds * 1000,
    { connectionId: connection.id },
    pullSchedulerId(connection.id),
  );
}

/** The active connections whose feed is pulled on a schedule. */
async function listPulledConnections(deps: PullDeps) {
  return (await listActiveConnections(deps.pool, feedProviders)).filter(
    (c) =>
      isProviderId(c.provider) &&
      pullsFeed(c.provider, decryptJson<ProviderConfig>(deps.secretsKey, c.configCiphertext)),
  );
}

/** Makes the per-connection feed schedulers match the active connections of pulled providers. */
export async function syncPullSchedules(deps: PullDeps): Promise<{ scheduled: number; removed: number }> {
  const connections = await listPulledConnections(deps);
  const wanted = new Set(connections.map((c) => pullSchedulerId(c.id)));
  for (const connection of connections) await schedulePullFeed(deps.queues, connection);
  let removed = 0;
  for (const scheduler of await deps.queues.queue('pull').getJobSchedulers()) {
    if (scheduler.key.startsWith(schedulerPrefix) && !wanted.has(scheduler.key)) {
      await deps.queues.unschedule('pull', scheduler.key);
      removed++;
    }
  }
  return { scheduled: connections.length, removed };
}

/**
 * Whether every pulled connection has its feed scheduler in Redis with a next run: one statement
 * and one read of the pull queue's schedulers, for the schedule checks (src/queue/schedules.ts).
 */
export async function pullSchedulesLive(deps: PullDeps): Promise<boolean> {
  const connections = await listPulledConnections(deps);
  if (connections.length === 0) return true;
  const scheduled = new Set(
    (await deps.queues.queue('pull').getJobSchedulers())
      .filter((scheduler) => scheduler.next !== undefined)
      .map((scheduler) => scheduler.key),
  );
  return connections.every((c) => scheduled.has(pullSchedulerId(c.id)));
}

export class RateLimitedError extends Error {
  constructor(readonly retryAfterMs: number) {
    super(`provider rate limit: retry after ${retryAfterMs} ms`);
  }
}

/**
 * Pulls one vehicle now and stores the result in the inbox with the refresh's id and cascade
 * flag. Throws RateLimitedError when the provider asks to wait.
 */
export async function pullVehicle(
  deps: PullDeps,
  vehicle: { connectionId: string; providerVehicleId: string },
  refresh: { refreshId: string; cascade: boolean },
): Promise<number> {
  const connection = await findProviderConnection(deps.pool, vehicle.connectionId);
  if (!connection?.active) throw new Error('provider connection is gone or inactive');
  const client = pullClients[connection.provider as keyof typeof pullClients];
  if (!client?.pullVehicle) throw new Error(`no vehicle pull for ${connection.provider}`);
  const config = decryptJson<ProviderConfig>(deps.secretsKey, connection.configCiphertext);
  const pulled = await client.pullVehicle(config, vehicle.providerVehicleId, contextOf(deps, deps.now()));
  if (!pulled.ok) {
    deps.metrics.pulls.inc({ provider: connection.provider, outcome: pulled.kind });
    if (pulled.kind === 'rate_limited') throw new RateLimitedError(pulled.retryAfterMs);
    throw new Error(pulled.message);
  }
  const row = await insertInboxRow(deps.pool, {
    connectionId: connection.id,
    provider: connection.provider,
    contentType: pulled.page.contentType,
    payload: pulled.page.body,
    cascade: refresh.cascade,
    refreshId: refresh.refreshId,
  });
  deps.metrics.pulls.inc({ provider: connection.provider, outcome: 'page' });
  deps.metrics.inboxAccepted.inc({ provider: connection.provider });
  await enqueueInboxRows(deps.queues, [row.id]);
  return row.id;
}
