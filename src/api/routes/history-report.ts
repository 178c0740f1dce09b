/**
 * POST /v1/history/report (docs/history-report.md): the report of any VIN
 * some company's vehicle has, across owners, sections by tier. JSON in the envelope, or a PDF when
 * `format` is "pdf" or the request accepts application/pdf, rendered on the CPU pool's threads
 * (src/cpu-pool/pool.ts) within CPU_TASK_BUDGET_MS. Paid and metered per successful answer; an
 * Idempotency-Key makes a retry return the same bytes unbilled.
 */
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { CpuPool } from '../../cpu-pool/pool.js';
import type { Pool } from '../../db/pool.js';
import { notFound } from '../../errors.js';
import { buildHistoryReport } from '../../history/build-report.js';
import type { HistoryReport as ReportData } from '../../history/types.js';
import type { Logger } from '../../log.js';
import { answerPaidCall, PaidHeaders, paidAnswer, paidErrorResponses } from '../paid-call.js';
import { Envelope, ErrorEnvelope } from '../../web/schemas.js';
import { HistoryReport, HistoryReportRequest } from '../schemas/history.js';
import { requireValidVin } from '../vin.js';

/** `format` decides when given; otherwise an Accept that names application/pdf (and not JSON first) does. */
function wantsPdf(format: 'json' | 'pdf' | undefined, request: FastifyRequest): boolean {
  if (format) return format === 'pdf';
  const accept = request.headers.accept ?? '';
  const pdf = accept.indexOf('application/pdf');
  const json = accept.indexOf('application/json');
  return pdf !== -1 && (json === -1 || pdf < json);
}

/** Turns a report into the PDF bytes streamed to the caller. */
export type HistoryPdfRenderer = (report: ReportData, companyId: string) => Promise<Readable>;

export const historyReportRoutes: FastifyPluginAsyncTypebox<{
  pool: Pool;
  log: Logger;
  cpuPool: CpuPool;
  now: () => Date;
  /** Replaces the CPU pool's renderer (tests: a stream that fails mid-way). */
  renderPdf?: HistoryPdfRenderer | undefined;
}> = async (app, deps) => {
  const renderPdf: HistoryPdfRenderer =
    deps.renderPdf ??
    (async (report, companyId) => Readable.from([await deps.cpuPool.renderHistoryPdf(report, companyId)]));
  app.post(
    '/history/report',
    {
      schema: {
        tags: ['History report'],
        operationId: 'createHistoryReport',
        summary: 'The history report of a VIN: JSON, or PDF with format "pdf" or Accept: application/pdf',
        description:
          'Tiers basic, standard, comprehensive, lifetime (sections and data range: docs/history-report.md). ' +
          'Billed per successful answer (docs/pricing.md). 400 names the VIN rule that failed in details.rule; ' +
          '404 when no vehicle has the VIN. The PDF answer is application/pdf; 422 WORK_BUDGET_EXCEEDED when rendering ' +
          'it needs more than CPU_TASK_BUDGET_MS, 503 when the CPU pool is full (neither is billed).',
        security: [{ bearerAuth: [] }],
        headers: PaidHeaders,
        body: HistoryReportRequest,
        response: { 200: paidAnswer(Envelope(HistoryReport), true), ...paidErrorResponses, 503: ErrorEnvelope },
      },
      // It only reads what it answers; its claim and usage rows are written on the primary (paid-call.ts).
      config: { replicaReads: true },
    },
    async (request, reply) => {
      const vin = requireValidVin(request.body.vin);
      const tier = request.body.tier ?? 'basic';
      const pdf = wantsPdf(request.body.format, request);
      return answerPaidCall(deps, request, reply, {
        product: 'history_report',
        tier,
        fingerprint: { vin, tier, format: pdf ? 'pdf' : 'json' },
        work: async () => {
          const report = await buildHistoryReport(request.readPool, {
            vin,
            tier,
            reportId: randomUUID(),
            now: deps.now(),
          });
          if (!report) throw notFound('vehicle with this VIN');
          if (!pdf) return { kind: 'json', data: report };
          return { kind: 'pdf', stream: await renderPdf(report, request.principal.companyId) };
        },
      });
    },
  );
};
