/**
 * The request log's writer (DESIGN §12, "Requests"). A request only appends its row to an
 * in-memory buffer; the buffer is written to Postgres in batches, one COPY per batch, every
 * `flushIntervalMs` or as soon as a batch is full, so the API's requests never wait on it. The
 * buffer is bounded: past `maxBufferedRows` (Postgres slow or down) rows are dropped and counted,
 * since a log of requests must never cost the requests themselves. Closing flushes what is left.
 *
 * A batch commits without waiting for its WAL flush: a Postgres crash may lose the last fraction
 * of a second of the log, which is cheaper than making every batch wait on the disk.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Counter } from 'prom-client';
import { copyApiRequests, type ApiRequestRow } from '../db/api-request-log.js';
import { commitWithoutFlushWait, withTransaction, type Pool } from '../db/pool.js';
import type { Logger } from '../log.js';

export interface RequestLogOptions {
  flushIntervalMs: number;
  batchRows: number;
  maxBufferedRows: number;
}

export const defaultRequestLogOptions: RequestLogOptions = {
  flushIntervalMs: 1000,
  batchRows: 2000,
  maxBufferedRows: 20_000,
};

export class RequestLogRecorder {
  private buffer: ApiRequestRow[] = [];
  /** The flush under way; flushes never overlap, so batches commit in order. */
  private flushing: Promise<void> | null = null;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly pool: Pool,
    private readonly log: Logger,
    private readonly dropped: Counter,
    private readonly options: RequestLogOptions = defaultRequestLogOptions,
  ) {
    this.timer = setInterval(() => void this.flush(), options.flushIntervalMs);
    // The log alone never keeps a process alive.
    this.timer.unref();
  }

  record(row: ApiRequestRow): void {
    if (this.buffer.length >= this.options.maxBufferedRows) {
      this.dropped.inc();
      return;
    }
    this.buffer.push(row);
    if (this.buffer.length >= this.options.batchRows && !this.flushing) void this.flush();
  }

  /** Writes what is buffered; resolves when it is written (or dropped). */
  flush(): Promise<void> {
    this.flushing ??= this.writeAll().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  private async writeAll(): Promise<void> {
    while (this.buffer.length > 0) {
      const batch = this.buffer.splice(0, this.options.batchRows);
      try {
        await withTransaction(this.pool, async (tx) => {
          await commitWithoutFlushWait(tx);
          const refused = await copyApiRequests(tx, batch);
          // Postgres' own reason (a day without a partition…) reaches the warning below.
          if (refused) throw refused;
        });
      } catch (err) {
        this.dropped.inc(batch.length);
        this.log.warn({ err, rows: batch.length }, 'request log rows dropped: could not write them');
      }
    }
  }

  /** Stops the timer and writes the rows still buffered (shutdown: before the pool closes). */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flushing;
    await this.flush();
  }
}

/** The row of a request made with an API key: its path without the query, never a header or body. */
export function requestLogRow(request: FastifyRequest, reply: FastifyReply): ApiRequestRow {
  const queryAt = request.url.indexOf('?');
  return {
    companyId: request.principal.companyId,
    requestedAt: new Date(Date.now() - reply.elapsedTime),
    method: request.method,
    path: queryAt < 0 ? request.url : request.url.slice(0, queryAt),
    status: reply.statusCode,
    durationMs: reply.elapsedTime,
    apiKeyId: request.principal.keyId,
    keyPrefix: request.principal.keyPrefix,
  };
}
