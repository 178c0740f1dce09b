/**
 * The PDF of a history report (docs/history-report.md), streamed: the answer is pdfkit's document, a Readable
 * the route pipes to the client; each page is written out as soon as it is complete (pages are not
 * buffered), so memory does not grow with the page count. Layout runs synchronously before this
 * returns, so a rendering fault throws here and the route can still answer with the error
 * envelope instead of a truncated PDF.
 *
 * Deterministic: the same report and creation date give the same bytes. pdfkit derives the file
 * identifier from the document information (title, dates) and names font subsets from their
 * order of use, and nothing here reads the clock or a random source.
 *
 * Accessible: tagged (structure tree, artifacts, table headers with scope, figures with
 * alternative text), document language and title shown in the viewer's title bar, and the
 * PDF/UA identifier; fonts are embedded subsets of DejaVu Sans (assets/fonts, with its licence).
 */
import type { Readable } from 'node:stream';
import PDFDocument from 'pdfkit';
import type { HistoryReport } from '../types.js';
import { formatDate, humanize } from './format.js';
import { createCanvas, pageMargins, pageSize } from './page.js';
import { drawCover, drawSections, vehicleTitle } from './sections.js';

export interface PdfOptions {
  /** Fixed in tests so the same report gives the same bytes. Default: the report's generated_at. */
  creationDate?: Date;
}

/** The XMP metadata pdfkit writes embeds the title as raw XML text, so markup characters are left out. */
function plainText(text: string): string {
  return text.replace(/&/g, 'and').replace(/[<>]/g, '');
}

export function renderHistoryReportPdf(report: HistoryReport, options: PdfOptions = {}): Readable {
  const title = plainText(`Vehicle history report: ${vehicleTitle(report)}, VIN ${report.vin}`);
  const doc = new PDFDocument({
    size: [pageSize.width, pageSize.height],
    margins: pageMargins,
    autoFirstPage: false,
    pdfVersion: '1.7',
    // pdfkit (v0.20) supports the PDF/UA subset; its type declarations list only PDF/A.
    subset: 'PDF/UA' as PDFKit.Mixins.PDFSubsets,
    tagged: true,
    lang: 'en-US',
    displayTitle: true,
    info: {
      Title: title,
      Subject: plainText(`${humanize(report.tier)} tier, report ${report.report_id}`),
      Keywords: `vehicle history, VIN ${report.vin}`,
      Creator: 'Fleet telematics history report',
      CreationDate: options.creationDate ?? new Date(report.generated_at),
    },
  });
  const canvas = createCanvas(
    doc,
    `VIN ${report.vin} · Report ${report.report_id} · ${humanize(report.tier)} tier · ${formatDate(report.generated_at)}`,
  );
  drawCover(canvas, report);
  drawSections(canvas, report);
  canvas.root.end();
  doc.end();
  return doc;
}
