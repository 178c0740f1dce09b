/**
 * The page the report is drawn on: US Letter geometry, the palette, type sizes, the running
 * footer, and the cursor that moves down the page. Page breaks happen only here (never inside
 * pdfkit's text wrapper), so a break never falls inside a marked-content sequence and every
 * continued table can repeat its header.
 *
 * Tagging: content is either inside a structure element (Document › Sect › H1/H2/P/Table/Figure)
 * or marked as an Artifact (rules, fills, the footer, repeated table headers), as PDF/UA asks.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { assetsDir } from '../../paths.js';

/** DejaVu Sans, vendored in assets/fonts with its licence; the family names are the fonts' PostScript names. */
const fontFaces = {
  regular: { file: 'DejaVuSans.ttf', family: 'DejaVuSans' },
  bold: { file: 'DejaVuSans-Bold.ttf', family: 'DejaVuSans-Bold' },
};
type FontFace = keyof typeof fontFaces;

let parsedFonts: Record<FontFace, PDFKit.Mixins.PDFFontSource> | undefined;

/**
 * The fonts parsed once per process. pdfkit takes an already-parsed fontkit Font (pdfkit 0.20
 * changelog); parsing DejaVu for every document was about half of the render time. fontkit is
 * loaded from pdfkit's own dependencies, so it is always the copy pdfkit was built against.
 */
export function reportFonts(): Record<FontFace, PDFKit.Mixins.PDFFontSource> {
  if (!parsedFonts) {
    const fontkit = createRequire(import.meta.resolve('pdfkit'))('fontkit') as { create(data: Buffer): unknown };
    const parse = (face: FontFace) =>
      fontkit.create(readFileSync(join(assetsDir, 'fonts', fontFaces[face].file))) as PDFKit.Mixins.PDFFontSource;
    parsedFonts = { regular: parse('regular'), bold: parse('bold') };
  }
  return parsedFonts;
}

function useFont(doc: PDFKit.PDFDocument, face: FontFace): PDFKit.PDFDocument {
  return doc.font(reportFonts()[face], fontFaces[face].family);
}

/** Points (1/72 in). */
export const pageSize = { width: 612, height: 792 };
export const margin = { top: 54, bottom: 60, side: 54 };
export const pageMargins = { top: margin.top, bottom: margin.bottom, left: margin.side, right: margin.side };
export const contentWidth = pageSize.width - 2 * margin.side;
export const contentBottom = pageSize.height - margin.bottom;

export const typeSize = { title: 20, heading: 13, body: 9.5, table: 8.5, small: 7.5 };

/** Text colours reach 4.5:1 contrast on white and on their own tints. */
export const colour = {
  ink: '#1f2933',
  muted: '#52606d',
  rule: '#cbd2d9',
  headerFill: '#e4e7eb',
  zebra: '#f5f7fa',
  accent: '#0b4f8a',
};

export interface Canvas {
  doc: PDFKit.PDFDocument;
  /** The Document structure element every tagged element hangs under. */
  root: PDFKit.PDFStructureElement;
  /** Top of the free space on the current page. */
  y: number;
  /** Footer text (VIN and report id): who this page belongs to when pages are separated. */
  footer: string;
  pageNumber: number;
}

export function createCanvas(doc: PDFKit.PDFDocument, footer: string): Canvas {
  const root = doc.struct('Document');
  doc.addStructure(root);
  const canvas: Canvas = { doc, root, y: margin.top, footer, pageNumber: 0 };
  newPage(canvas);
  return canvas;
}

/** Draws decoration that carries no meaning (fills, rules) outside the structure tree. */
export function artifact(canvas: Canvas, draw: () => void): void {
  canvas.doc.markContent('Artifact');
  draw();
  canvas.doc.endMarkedContent();
}

export function newPage(canvas: Canvas): void {
  const { doc } = canvas;
  doc.addPage({ size: [pageSize.width, pageSize.height], margins: pageMargins });
  canvas.pageNumber += 1;
  canvas.y = margin.top;
  const footerY = pageSize.height - margin.bottom + 24;
  doc.markContent('Artifact', { type: 'Pagination' });
  doc
    .moveTo(margin.side, footerY - 6)
    .lineTo(pageSize.width - margin.side, footerY - 6)
    .lineWidth(0.5)
    .strokeColor(colour.rule)
    .stroke();
  useFont(doc, 'regular').fontSize(typeSize.small).fillColor(colour.muted);
  // lineBreak false: the footer sits below the bottom margin, where wrapped text would start a page.
  doc.text(canvas.footer, margin.side, footerY, { lineBreak: false });
  const label = `Page ${canvas.pageNumber}`;
  doc.text(label, pageSize.width - margin.side - doc.widthOfString(label), footerY, { lineBreak: false });
  doc.endMarkedContent();
}

/** Starts a new page unless `height` points still fit below the cursor. */
export function ensureSpace(canvas: Canvas, height: number): void {
  if (canvas.y + height > contentBottom) newPage(canvas);
}

export interface TextStyle {
  size: number;
  bold?: boolean;
  colour?: string;
}

export function setStyle(canvas: Canvas, style: TextStyle): void {
  useFont(canvas.doc, style.bold ? 'bold' : 'regular')
    .fontSize(style.size)
    .fillColor(style.colour ?? colour.ink);
}

export function textHeight(canvas: Canvas, text: string, style: TextStyle, width: number): number {
  setStyle(canvas, style);
  return canvas.doc.heightOfString(text, { width });
}

/**
 * A tagged block of text (H1, H2, P…) at the cursor, moved to a new page first when it does not
 * fit; the cursor ends `gapAfter` below it.
 */
export function block(
  canvas: Canvas,
  parent: PDFKit.PDFStructureElement,
  type: string,
  text: string,
  style: TextStyle,
  gapAfter = 6,
  width = contentWidth,
  x = margin.side,
): void {
  const height = textHeight(canvas, text, style, width);
  ensureSpace(canvas, height);
  const y = canvas.y;
  parent.add(
    canvas.doc.struct(type, {}, () => {
      setStyle(canvas, style);
      canvas.doc.text(text, x, y, { width });
    }),
  );
  canvas.y = y + height + gapAfter;
}
