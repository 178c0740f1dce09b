/**
 * A table that reads well on paper and to a screen reader: wrapped cells, a zebra fill, and the
 * header row repeated at the top of every page the table continues on. pdfkit's own `doc.table`
 * does not repeat headers (pdfkit#1657), hence this helper.
 *
 * Tagging: Table › TR › TH (scope Column, or Row for a key column) / TD. A repeated header is an
 * Artifact, so assistive technology reads the header once, as it would in an HTML table.
 */
import {
  artifact,
  type Canvas,
  colour,
  contentBottom,
  contentWidth,
  ensureSpace,
  margin,
  newPage,
  setStyle,
  textHeight,
  typeSize,
} from './page.js';

export interface TableColumn {
  header: string;
  /** Share of the content width; the shares of a table add up to 1. */
  width: number;
  align?: 'left' | 'right';
}

export interface TableSpec {
  columns: TableColumn[];
  rows: string[][];
  /** The first column names its row (a key-value table): tagged TH with Row scope. */
  rowHeaders?: boolean;
  /** Horizontal cell padding in points (default 5); narrow columns of figures use less. */
  cellPadding?: number;
}

const defaultPadX = 5;
const padY = 4;
/** A row never outgrows half a page: longer text is cut with an ellipsis rather than spilling past the page. */
const maxRowHeight = (contentBottom - margin.top) / 2;
/** Tables up to this height (points) are never split across pages. */
export const keepTogetherHeight = 160;
const headerStyle = { size: typeSize.table, bold: true };
const cellStyle = { size: typeSize.table };

/** pdfkit's structure options (v0.20) take a table scope; its type declarations do not list it yet. */
function cellOptions(scope: 'Column' | 'Row'): PDFKit.Mixins.StructureElementOptions {
  return { scope } as PDFKit.Mixins.StructureElementOptions;
}

function columnWidths(columns: TableColumn[]): number[] {
  return columns.map((column) => column.width * contentWidth);
}

function rowHeight(
  canvas: Canvas,
  cells: string[],
  widths: number[],
  padX: number,
  bold: (index: number) => boolean,
): number {
  let tallest = 0;
  cells.forEach((cell, index) => {
    const style = bold(index) ? headerStyle : cellStyle;
    tallest = Math.max(tallest, textHeight(canvas, cell, style, (widths[index] ?? 0) - 2 * padX));
  });
  return Math.min(tallest + 2 * padY, maxRowHeight);
}

interface Cell {
  text: string;
  x: number;
  y: number;
  width: number;
  padX: number;
  column: TableColumn;
  bold: boolean;
}

function drawCellText(canvas: Canvas, { text, x, y, width, padX, column, bold }: Cell) {
  setStyle(canvas, bold ? headerStyle : cellStyle);
  canvas.doc.text(text, x + padX, y + padY, {
    width: width - 2 * padX,
    height: maxRowHeight - 2 * padY,
    ellipsis: true,
    align: column.align ?? 'left',
  });
}

function drawHeader(canvas: Canvas, table: PDFKit.PDFStructureElement | null, spec: TableSpec, widths: number[]) {
  const padX = spec.cellPadding ?? defaultPadX;
  const height = rowHeight(
    canvas,
    spec.columns.map((column) => column.header),
    widths,
    padX,
    () => true,
  );
  const y = canvas.y;
  artifact(canvas, () => {
    canvas.doc.rect(margin.side, y, contentWidth, height).fill(colour.headerFill);
  });
  const drawCells = (tag: (index: number, draw: () => void) => void) => {
    let x = margin.side;
    spec.columns.forEach((column, index) => {
      const cellX = x;
      const width = widths[index] ?? 0;
      tag(index, () => drawCellText(canvas, { text: column.header, x: cellX, y, width, padX, column, bold: true }));
      x += width;
    });
  };
  if (table) {
    const row = canvas.doc.struct('TR');
    table.add(row);
    drawCells((_index, draw) => row.add(canvas.doc.struct('TH', cellOptions('Column'), draw)));
    row.end();
  } else {
    artifact(canvas, () => drawCells((_index, draw) => draw()));
  }
  canvas.y = y + height;
}

export function drawTable(canvas: Canvas, parent: PDFKit.PDFStructureElement, spec: TableSpec): void {
  const { doc } = canvas;
  const widths = columnWidths(spec.columns);
  const padX = spec.cellPadding ?? defaultPadX;
  const headerHeight = rowHeight(
    canvas,
    spec.columns.map((column) => column.header),
    widths,
    padX,
    () => true,
  );
  const isKey = (index: number) => spec.rowHeaders === true && index === 0;
  const heights = spec.rows.map((cells) => rowHeight(canvas, cells, widths, padX, isKey));
  // A short table stays on one page; a long one starts where at least its first row fits.
  const totalHeight = headerHeight + heights.reduce((sum, height) => sum + height, 0);
  ensureSpace(canvas, totalHeight <= keepTogetherHeight ? totalHeight : headerHeight + (heights[0] ?? 0));

  const table = doc.struct('Table');
  parent.add(table);
  drawHeader(canvas, table, spec, widths);
  spec.rows.forEach((cells, rowIndex) => {
    const height = heights[rowIndex] ?? 0;
    if (canvas.y + height > contentBottom) {
      newPage(canvas);
      drawHeader(canvas, null, spec, widths);
    }
    const y = canvas.y;
    artifact(canvas, () => {
      if (rowIndex % 2 === 1) doc.rect(margin.side, y, contentWidth, height).fill(colour.zebra);
      doc
        .moveTo(margin.side, y + height)
        .lineTo(margin.side + contentWidth, y + height)
        .lineWidth(0.5)
        .strokeColor(colour.rule)
        .stroke();
    });
    const row = doc.struct('TR');
    table.add(row);
    let x = margin.side;
    cells.forEach((cell, index) => {
      const cellX = x;
      const width = widths[index] ?? 0;
      const column = spec.columns[index] ?? { header: '', width: 0 };
      const draw = () => drawCellText(canvas, { text: cell, x: cellX, y, width, padX, column, bold: isKey(index) });
      row.add(isKey(index) ? doc.struct('TH', cellOptions('Row'), draw) : doc.struct('TD', {}, draw));
      x += width;
    });
    row.end();
    canvas.y = y + height;
  });
  table.end();
  canvas.y += 10;
}
