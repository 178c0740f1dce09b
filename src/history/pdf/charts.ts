/**
 * The two charts of the report, drawn as PDF vector paths: d3-scale maps data to points, d3-shape
 * writes the SVG path data that pdfkit's `path()` draws. No canvas and no browser, so the charts
 * are sharp at any zoom, searchable (their labels are text) and cost no raster memory.
 *
 * Each chart is one tagged Figure with alternative text that states what the chart shows in words
 * (range, extremes, sources, flagged readings), for readers who cannot see it.
 */
import { scaleBand, scaleLinear, scaleUtc } from 'd3-scale';
import {
  line,
  symbol,
  symbolCircle,
  symbolDiamond,
  symbolSquare,
  symbolStar,
  symbolTriangle,
  symbolWye,
} from 'd3-shape';
import type { HistoryReport } from '../types.js';
import { formatCount, formatDate, formatMiles, formatMonth, formatMonthTick, formatTimeTick } from './format.js';
import { type Canvas, colour, contentWidth, ensureSpace, margin, setStyle, typeSize } from './page.js';

type Timeline = NonNullable<HistoryReport['telematics']>['odometer_timeline'];
type MonthlyMileage = NonNullable<HistoryReport['telematics']>['monthly_mileage'];

/** Okabe–Ito colours (distinguishable with the common colour-vision deficiencies), each with its own marker shape. */
const sourceStyles = [
  { colour: '#0072b2', shape: symbolCircle },
  { colour: '#e69f00', shape: symbolSquare },
  { colour: '#009e73', shape: symbolTriangle },
  { colour: '#cc79a7', shape: symbolDiamond },
  { colour: '#56b4e9', shape: symbolStar },
  { colour: '#6b6b6b', shape: symbolWye },
];
const flaggedColour = '#c62828';

const chartHeight = 190;
const maxMonthWidth = 36;
const legendHeight = 16;
/** The most a chart takes on the page, legend and gap below included. */
export const chartSpace = chartHeight + legendHeight + 10;
const plot = { left: 52, right: 8, top: 8, bottom: 20 };

/** pdfkit (v0.20) places a Figure's layout box from `bbox`; its type declarations do not list it yet. */
function figureOptions(alt: string, box: { x: number; y: number; width: number; height: number }) {
  return {
    alt,
    bbox: [box.x, box.y, box.x + box.width, box.y + box.height],
    placement: 'Block',
  } as PDFKit.Mixins.StructureElementOptions;
}

function drawYAxis(canvas: Canvas, y: (value: number) => number, ticks: number[], left: number, right: number) {
  const { doc } = canvas;
  setStyle(canvas, { size: typeSize.small, colour: colour.muted });
  for (const tick of ticks) {
    const ty = y(tick);
    doc.moveTo(left, ty).lineTo(right, ty).lineWidth(0.4).strokeColor(colour.rule).stroke();
    const label = formatCount(tick);
    doc.text(label, left - 4 - doc.widthOfString(label), ty - typeSize.small / 2 - 1, { lineBreak: false });
  }
}

function drawLegend(canvas: Canvas, items: Array<{ label: string; draw: (x: number, y: number) => void }>, y: number) {
  const { doc } = canvas;
  let x = margin.side + plot.left;
  setStyle(canvas, { size: typeSize.small, colour: colour.ink });
  for (const item of items) {
    item.draw(x + 4, y + 4);
    doc.text(item.label, x + 12, y, { lineBreak: false });
    x += 12 + doc.widthOfString(item.label) + 16;
  }
}

function marker(canvas: Canvas, shape: (typeof sourceStyles)[number], x: number, y: number, size: number) {
  const path = symbol(shape.shape, size)();
  if (!path) return;
  canvas.doc.save().translate(x, y).path(path).fillColor(shape.colour).fill().restore();
}

function flagRing(canvas: Canvas, x: number, y: number) {
  canvas.doc.circle(x, y, 5).lineWidth(1.4).strokeColor(flaggedColour).stroke();
}

type TimedReading = Timeline[number] & { time: number };

/** Oldest first, by the instant (ISO strings with different offsets do not sort as text). */
function byTime(timeline: Timeline): TimedReading[] {
  return timeline.map((reading) => ({ ...reading, time: Date.parse(reading.at) })).sort((a, b) => a.time - b.time);
}

export function odometerChartAlt(timeline: Timeline): string {
  if (timeline.length === 0) return 'Odometer timeline: no readings in the data range.';
  const sorted = byTime(timeline);
  const first = sorted[0]!;
  const last = sorted[sorted.length - 1]!;
  const sources = [...new Set(sorted.map((reading) => reading.source))].sort();
  const flagged = sorted.filter((reading) => reading.flagged).length;
  return (
    `Odometer timeline: ${formatCount(sorted.length)} readings from ${formatDate(first.at)} (${formatMiles(first.miles)}) ` +
    `to ${formatDate(last.at)} (${formatMiles(last.miles)}), from ${sources.join(', ')}; ` +
    `${flagged === 0 ? 'no reading flagged' : `${flagged} flagged by an integrity rule`}.`
  );
}

export function drawOdometerChart(canvas: Canvas, parent: PDFKit.PDFStructureElement, timeline: Timeline): void {
  const height = chartHeight + legendHeight;
  ensureSpace(canvas, height);
  const box = { x: margin.side, y: canvas.y, width: contentWidth, height };
  const sorted = byTime(timeline);
  const oneDayMs = 86_400_000;
  const [minTime, maxTime] = [sorted[0]!.time, sorted[sorted.length - 1]!.time];
  // Loops, not Math.min(...array): a lifetime of daily readings can exceed the argument limit.
  let [minMiles, maxMiles] = [Infinity, -Infinity];
  for (const reading of sorted) {
    minMiles = Math.min(minMiles, reading.miles);
    maxMiles = Math.max(maxMiles, reading.miles);
  }
  // A single reading (or a flat odometer) still gets a readable axis around it.
  const x = scaleUtc()
    .domain(minTime === maxTime ? [minTime - oneDayMs, maxTime + oneDayMs] : [minTime, maxTime])
    .range([box.x + plot.left, box.x + box.width - plot.right]);
  const y = scaleLinear()
    .domain(minMiles === maxMiles ? [minMiles - 100, maxMiles + 100] : [minMiles, maxMiles])
    .nice()
    .range([box.y + chartHeight - plot.bottom, box.y + plot.top]);
  const sources = [...new Set(sorted.map((reading) => reading.source))].sort();
  const styleOf = (source: string) => sourceStyles[sources.indexOf(source) % sourceStyles.length]!;
  // A marker per reading helps up to a few hundred points; beyond that (daily readings over years)
  // the line says it all, markers would only cost time, and flagged readings keep theirs.
  const denseSources = new Set(sources.filter((source) => sorted.filter((r) => r.source === source).length > 150));

  parent.add(
    canvas.doc.struct('Figure', figureOptions(odometerChartAlt(timeline), box), () => {
      const { doc } = canvas;
      const [left, right] = x.range() as [number, number];
      drawYAxis(canvas, y, y.ticks(5), left, right);
      setStyle(canvas, { size: typeSize.small, colour: colour.muted });
      const bottom = box.y + chartHeight - plot.bottom;
      let previous: { tick: Date; right: number } | undefined;
      for (const tick of x.ticks(6)) {
        const label = formatTimeTick(tick, previous?.tick);
        const width = doc.widthOfString(label);
        const tx = Math.min(Math.max(x(tick) - width / 2, left), right - width);
        // A label that would touch the previous one is left out rather than overprinted.
        if (previous && tx < previous.right + 6) continue;
        doc.text(label, tx, bottom + 5, { lineBreak: false });
        previous = { tick, right: tx + width };
      }
      for (const source of sources) {
        const readings = sorted.filter((reading) => reading.source === source);
        // Drawn straight into the page (pdfkit has the canvas path methods d3 calls), so years of
        // daily readings cost no SVG path text to build and parse.
        line<TimedReading>()
          .x((reading) => x(reading.time))
          .y((reading) => y(reading.miles))
          .context(doc as unknown as CanvasRenderingContext2D)(readings);
        doc.lineWidth(1).strokeColor(styleOf(source).colour).stroke();
      }
      for (const reading of sorted) {
        if (!reading.flagged && denseSources.has(reading.source)) continue;
        const px = x(reading.time);
        const py = y(reading.miles);
        marker(canvas, styleOf(reading.source), px, py, 28);
        if (reading.flagged) flagRing(canvas, px, py);
      }
      const legend = sources.map((source) => ({
        label: source,
        draw: (lx: number, ly: number) => marker(canvas, styleOf(source), lx, ly, 28),
      }));
      legend.push({ label: 'flagged reading', draw: (lx, ly) => flagRing(canvas, lx, ly) });
      drawLegend(canvas, legend, box.y + chartHeight);
    }),
  );
  canvas.y = box.y + height + 10;
}

export function monthlyMileageAlt(monthly: MonthlyMileage): string {
  if (monthly.length === 0) return 'Monthly mileage: no months in the data range.';
  const highest = monthly.reduce((best, month) => (month.miles > best.miles ? month : best));
  const total = monthly.reduce((sum, month) => sum + month.miles, 0);
  return (
    `Miles driven per month from ${formatMonth(monthly[0]!.month)} to ${formatMonth(monthly[monthly.length - 1]!.month)}: ` +
    `${formatMiles(total)} in ${monthly.length} months, an average of ${formatMiles(total / monthly.length)} a month; ` +
    `highest ${formatMiles(highest.miles)} in ${formatMonth(highest.month)}.`
  );
}

export function drawMonthlyMileageChart(canvas: Canvas, parent: PDFKit.PDFStructureElement, monthly: MonthlyMileage) {
  ensureSpace(canvas, chartHeight);
  const box = { x: margin.side, y: canvas.y, width: contentWidth, height: chartHeight };
  // A month never gets more than 36 pt: a few months draw as narrow bars from the left, not slabs.
  const plotLeft = box.x + plot.left;
  const plotWidth = Math.min(box.width - plot.left - plot.right, monthly.length * maxMonthWidth);
  const x = scaleBand<string>()
    .domain(monthly.map((month) => month.month))
    .range([plotLeft, plotLeft + plotWidth])
    .paddingInner(0.2)
    .paddingOuter(0.1);
  const y = scaleLinear()
    .domain([0, Math.max(1, ...monthly.map((month) => month.miles))])
    .nice()
    .range([box.y + chartHeight - plot.bottom, box.y + plot.top]);
  // About nine labels (with their year) fit across the page; longer ranges label every n-th month.
  const labelEvery = Math.ceil(monthly.length / 9);

  parent.add(
    canvas.doc.struct('Figure', figureOptions(monthlyMileageAlt(monthly), box), () => {
      const { doc } = canvas;
      const [left, right] = x.range() as [number, number];
      drawYAxis(canvas, y, y.ticks(5), left, right);
      const bottom = y(0);
      let labelledYear = '';
      monthly.forEach((month, index) => {
        const bx = x(month.month) ?? left;
        doc.rect(bx, y(month.miles), x.bandwidth(), bottom - y(month.miles)).fill(colour.accent);
        if (index % labelEvery !== 0) return;
        setStyle(canvas, { size: typeSize.small, colour: colour.muted });
        const year = month.month.slice(0, 4);
        const label = formatMonthTick(month.month, year !== labelledYear);
        labelledYear = year;
        doc.text(label, bx + x.bandwidth() / 2 - doc.widthOfString(label) / 2, bottom + 5, { lineBreak: false });
      });
      doc.moveTo(left, bottom).lineTo(right, bottom).lineWidth(0.8).strokeColor(colour.muted).stroke();
    }),
  );
  canvas.y = box.y + chartHeight + 10;
}
