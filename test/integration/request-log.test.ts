import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ensureApiRequestLogPartitions,
  listApiRequestLogPartitions,
  listApiRequests,
  type ApiRequestFilter,
  type ApiRequestRecord,
  type ApiRequestRow,
} from '../../src/db/api-request-log.js';
import { createPool, type Pool } from '../../src/db/pool.js';
import { encodeCursor, readPage, type PageRequest } from '../../src/domain/keyset-page.js';
import { createLogger } from '../../src/log.js';
import { createMetrics } from '../../src/metrics.js';
import { RequestLogRecorder } from '../../src/request-log/recorder.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

let database: TestDatabase;
let pool: Pool;
const log = createLogger('silent');

beforeAll(async () => {
  database = await createTestDatabase();
  pool = createPool(database.url, 3, log);
});
afterAll(async () => {
  await pool.end();
  await database.drop();
});

function row(companyId: string, at: Date, overrides: Partial<ApiRequestRow> = {}): ApiRequestRow {
  return {
    companyId,
    requestedAt: at,
    method: 'GET',
    path: '/v1/usage',
    status: 200,
    durationMs: 1.5,
    apiKeyId: randomUUID(),
    keyPrefix: 'fk_abcdef',
    ...overrides,
  };
}

const dropped = (metrics: ReturnType<typeof createMetrics>) =>
  metrics.registry
    .getSingleMetric('request_log_rows_dropped_total')!
    .get()
    .then((m) => m.values[0]?.value ?? 0);

describe('request log recorder', () => {
  it('writes buffered rows in batches off the request, and what is left on close', async () => {
    const metrics = createMetrics('t');
    const recorder = new RequestLogRecorder(pool, log, metrics.requestLogDropped, {
      flushIntervalMs: 60_000,
      batchRows: 3,
      maxBufferedRows: 100,
    });
    const company = randomUUID();
    const now = Date.now();
    for (let i = 0; i < 7; i++) recorder.record(row(company, new Date(now - i * 1000), { path: `/v1/r/${i}` }));
    // The first full batch is written at once; the last row waits for the timer or close.
    await expect
      .poll(
        async () =>
          (await pool.query(`SELECT count(*)::int AS n FROM api_request_log WHERE company_id = $1`, [company])).rows[0]
            .n,
      )
      .toBeGreaterThanOrEqual(6);
    await recorder.close();
    const { rows } = await pool.query(`SELECT path FROM api_request_log WHERE company_id = $1 ORDER BY path`, [
      company,
    ]);
    expect(rows.map((r) => r.path)).toEqual([0, 1, 2, 3, 4, 5, 6].map((i) => `/v1/r/${i}`));
    expect(await dropped(metrics)).toBe(0);
  });

  it('keeps a path exactly as requested, backslashes and tabs included', async () => {
    const metrics = createMetrics('t');
    const recorder = new RequestLogRecorder(pool, log, metrics.requestLogDropped);
    const company = randomUUID();
    const paths = ['/v1/a\\b', '/v1/tab\there', '/v1/ü/%09/\\N', '/v1/line\nbreak\r'];
    for (const path of paths) recorder.record(row(company, new Date(), { path }));
    await recorder.close();
    const { rows } = await pool.query(`SELECT path FROM api_request_log WHERE company_id = $1`, [company]);
    expect(rows.map((r) => r.path).sort()).toEqual([...paths].sort());
    expect(await dropped(metrics)).toBe(0);
  });

  it('drops and counts rows past its bound, and rows Postgres refuses, without throwing', async () => {
    const metrics = createMetrics('t');
    const recorder = new RequestLogRecorder(pool, log, metrics.requestLogDropped, {
      flushIntervalMs: 60_000,
      batchRows: 10,
      maxBufferedRows: 2,
    });
    const company = randomUUID();
    for (let i = 0; i < 5; i++) recorder.record(row(company, new Date()));
    // A day with no partition (a year back) is refused as a batch.
    recorder.record(row(company, new Date(Date.now() - 365 * 86_400_000)));
    await recorder.close();
    expect(await dropped(metrics)).toBe(4);
    const { rows } = await pool.query(`SELECT count(*)::int AS n FROM api_request_log WHERE company_id = $1`, [
      company,
    ]);
    expect(rows[0].n).toBe(2);
  });
});

describe('request log reads', () => {
  it('pages newest first by cursor, stable while rows are added, filtered by status class and key', async () => {
    const metrics = createMetrics('t');
    const recorder = new RequestLogRecorder(pool, log, metrics.requestLogDropped);
    const company = randomUUID();
    const key = randomUUID();
    const base = Date.now() - 60_000;
    // 12 requests a second apart, every third a 404 from another key.
    for (let i = 0; i < 12; i++)
      recorder.record(
        row(company, new Date(base + i * 1000), {
          path: `/v1/r/${i}`,
          ...(i % 3 === 0 ? { status: 404, apiKeyId: key } : {}),
        }),
      );
    await recorder.flush();
    const since = new Date(base - 1000);
    const filter: ApiRequestFilter = { statusClass: null, apiKeyId: null };
    const cursorOf = (r: ApiRequestRecord) => encodeCursor([r.requestedAt.toISOString(), r.id]);
    const read = (request: PageRequest, f = filter) =>
      readPage(
        request,
        (direction, cursor, limit) => {
          const parts = cursor ? Buffer.from(cursor, 'base64url').toString().split('\n') : null;
          const at = parts ? { requestedAt: new Date(parts[0]!), id: parts[1]! } : null;
          return listApiRequests(pool, company, f, since, direction, at, limit);
        },
        cursorOf,
      );
    const paths = (rows: ApiRequestRecord[]) => rows.map((r) => Number(r.path.split('/').pop()));

    const first = await read({ direction: 'next', cursor: null, limit: 5 });
    expect(paths(first.rows)).toEqual([11, 10, 9, 8, 7]);
    expect(first.previous).toBeNull();
    // A newer request arrives: the next page is unaffected.
    recorder.record(row(company, new Date(base + 50_000), { path: '/v1/r/99' }));
    await recorder.flush();
    const second = await read({ direction: 'next', cursor: first.next, limit: 5 });
    expect(paths(second.rows)).toEqual([6, 5, 4, 3, 2]);
    const third = await read({ direction: 'next', cursor: second.next, limit: 5 });
    expect(paths(third.rows)).toEqual([1, 0]);
    expect(third.next).toBeNull();
    const back = await read({ direction: 'previous', cursor: third.previous, limit: 5 });
    expect(paths(back.rows)).toEqual([6, 5, 4, 3, 2]);
    // The page before is the one seen first; above it, the newcomer.
    const before = await read({ direction: 'previous', cursor: back.previous, limit: 5 });
    expect(paths(before.rows)).toEqual([11, 10, 9, 8, 7]);
    // Back at the top, the first page is full, not the one row above.
    const top = await read({ direction: 'previous', cursor: before.previous, limit: 5 });
    expect(paths(top.rows)).toEqual([99, 11, 10, 9, 8]);
    expect(top.previous).toBeNull();

    const notFound = await read({ direction: 'next', cursor: null, limit: 10 }, { statusClass: 4, apiKeyId: null });
    expect(paths(notFound.rows)).toEqual([9, 6, 3, 0]);
    const byKey = await read({ direction: 'next', cursor: null, limit: 10 }, { statusClass: 2, apiKeyId: key });
    expect(byKey.rows).toEqual([]);
    await recorder.close();
  });

  it('keeps daily partitions from yesterday to a week ahead', async () => {
    await ensureApiRequestLogPartitions(pool, new Date('2031-01-30T12:00:00Z'));
    const days = (await listApiRequestLogPartitions(pool)).map((p) => p.day).filter((d) => d.startsWith('2031'));
    expect(days).toEqual([
      '2031-01-29',
      '2031-01-30',
      '2031-01-31',
      '2031-02-01',
      '2031-02-02',
      '2031-02-03',
      '2031-02-04',
      '2031-02-05',
      '2031-02-06',
    ]);
  });
});
