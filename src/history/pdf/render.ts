/**
 * The PDF of a history report, streamed. Interface agreed for issue 10; the renderer lands with
 * the PDF work.
 */
import type { Readable } from 'node:stream';
import type { HistoryReport } from '../types.js';

export interface PdfOptions {
  /** Fixed in tests so the same report gives the same bytes. Default: the report's generated_at. */
  creationDate?: Date;
}

export function renderHistoryReportPdf(report: HistoryReport, options: PdfOptions = {}): Readable {
  void options;
  throw new Error(`renderHistoryReportPdf(${report.vin}): not built yet (issue 10)`);
}
