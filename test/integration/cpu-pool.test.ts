/**
 * The API's CPU pool on real worker threads running the built task module (issue 16): a report PDF
 * rendered on a thread is byte for byte the one rendered in process; a full pool refuses at once
 * with 503 and Retry-After, and takes work again when a thread frees up; one company holds at most
 * CPU_POOL_TASKS_PER_COMPANY of its places (429), the others keep theirs; closing it stops the
 * tasks in flight with 503 (shutdown) and refuses later ones alike.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { CpuPool } from '../../src/cpu-pool/pool.js';
import { AppError } from '../../src/errors.js';
import { renderHistoryReportPdf } from '../../src/history/pdf/render.js';
import { createLogger } from '../../src/log.js';
import { sampleHistoryReport } from '../helpers/history-report.js';

const config = loadConfig({ LOG_LEVEL: 'silent', CPU_POOL_THREADS: '1', CPU_POOL_QUEUE: '0' });
const pool = new CpuPool(config, createLogger('silent'));
afterAll(() => pool.close());

async function inProcess(report: ReturnType<typeof sampleHistoryReport>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of renderHistoryReportPdf(report)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

describe('CPU pool', () => {
  it('renders a report PDF on a thread, the same bytes as in process', async () => {
    const report = sampleHistoryReport('lifetime', 'many_rows');
    const pdf = await pool.renderHistoryPdf(report, 'company-1');
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(pdf.equals(await inProcess(report))).toBe(true);
  });

  it('with every thread busy and no room to wait, refuses at once with 503 and Retry-After; then works again', async () => {
    const report = sampleHistoryReport('basic');
    const first = pool.renderHistoryPdf(report, 'company-1');
    const refused = await pool.renderHistoryPdf(report, 'company-2').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      status: 503,
      message: expect.stringContaining('CPU_POOL_QUEUE'),
      retryAfterSeconds: Math.ceil(config.cpuTaskBudgetMs / 1000),
    });
    expect((await first).subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect((await pool.renderHistoryPdf(report, 'company-2')).subarray(0, 5).toString('latin1')).toBe('%PDF-');
  });

  it("holds one company to CPU_POOL_TASKS_PER_COMPANY places (429 with Retry-After), while another company's task still runs", async () => {
    const shared = new CpuPool(
      loadConfig({ LOG_LEVEL: 'silent', CPU_POOL_THREADS: '1', CPU_POOL_QUEUE: '4', CPU_POOL_TASKS_PER_COMPANY: '2' }),
      createLogger('silent'),
    );
    try {
      const report = sampleHistoryReport('basic');
      // Company 1 fills its two places (one on the thread, one waiting); its third is refused.
      const own = [0, 1].map(() => shared.renderHistoryPdf(report, 'company-1'));
      const refused = await shared.renderHistoryPdf(report, 'company-1').catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(AppError);
      expect(refused).toMatchObject({
        code: 'RATE_LIMITED',
        status: 429,
        message: expect.stringContaining('CPU_POOL_TASKS_PER_COMPANY'),
        retryAfterSeconds: Math.ceil(config.cpuTaskBudgetMs / 1000),
      });
      // The queue still has room for everyone else.
      const other = await shared.renderHistoryPdf(report, 'company-2');
      expect(other.subarray(0, 5).toString('latin1')).toBe('%PDF-');
      for (const pdf of await Promise.all(own)) expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
      // Its places are given back once its tasks are done.
      expect((await shared.renderHistoryPdf(report, 'company-1')).subarray(0, 5).toString('latin1')).toBe('%PDF-');
    } finally {
      await shared.close();
    }
  });

  it('on close, stops the tasks in flight with 503 and Retry-After, and refuses later ones alike', async () => {
    // A budget no render comes near: only the close can end these tasks early.
    const closing = new CpuPool(
      loadConfig({ LOG_LEVEL: 'silent', CPU_POOL_THREADS: '1', CPU_TASK_BUDGET_MS: '120000' }),
      createLogger('silent'),
    );
    const report = sampleHistoryReport('lifetime', 'many_rows');
    // One rendering on the thread, one waiting for it.
    const inFlight = [0, 1].map(() => closing.renderHistoryPdf(report, 'company-1').catch((error: unknown) => error));
    await closing.close();
    const shuttingDown = {
      code: 'SERVICE_UNAVAILABLE',
      status: 503,
      message: 'the service is shutting down; retry',
      retryAfterSeconds: 1,
    };
    for (const outcome of await Promise.all(inFlight)) {
      expect(outcome).toBeInstanceOf(AppError);
      expect(outcome).toMatchObject(shuttingDown);
    }
    await expect(closing.renderHistoryPdf(report, 'company-1')).rejects.toMatchObject(shuttingDown);
  });
});
