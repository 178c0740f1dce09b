/**
 * The report's pages, in reading order: the cover (vehicle, verdict, key facts), then one tagged
 * section per part of the report. A section outside the tier says which tier includes it; an
 * included section without records says so, rather than printing an empty table.
 */
import { type HistoryReport, type ReportTier, reportTiers } from '../types.js';
import { chartSpace, drawMonthlyMileageChart, drawOdometerChart } from './charts.js';
import {
  formatCount,
  formatDate,
  formatDateTime,
  formatDecimal,
  formatMiles,
  formatYesNo,
  humanize,
  noValue,
} from './format.js';
import {
  artifact,
  block,
  type Canvas,
  colour,
  contentWidth,
  ensureSpace,
  margin,
  newPage,
  textHeight,
  typeSize,
} from './page.js';
import { drawTable, keepTogetherHeight } from './table.js';
import { historyVerdict, type VerdictLevel } from './verdict.js';

const verdictColours: Record<VerdictLevel, { ink: string; tint: string }> = {
  attention: { ink: '#a61b1b', tint: '#fdecea' },
  caution: { ink: '#7a4d00', tint: '#fff4de' },
  unknown: { ink: '#3e4c59', tint: '#eef1f4' },
  clear: { ink: '#1b6e35', tint: '#e7f4ea' },
};

const headingStyle = { size: typeSize.heading, bold: true, colour: colour.accent };
const subheadingStyle = { size: typeSize.body + 1, bold: true };
const bodyStyle = { size: typeSize.body };
const noteStyle = { size: typeSize.body, colour: colour.muted };

export function vehicleTitle(report: HistoryReport): string {
  const { year, make, model, trim } = report.vehicle;
  const words = [year === null ? null : String(year), make, model, trim].filter((word) => word !== null && word !== '');
  return words.length > 0 ? words.join(' ') : 'Vehicle';
}

function dataRangeText(report: HistoryReport): string {
  const to = formatDate(report.data_range.to);
  return report.data_range.from === null ? `All available, to ${to}` : `${formatDate(report.data_range.from)} to ${to}`;
}

/** Room kept below a heading: a short table (moved whole to the next page otherwise), or a note. */
const withTable = keepTogetherHeight;
const withNote = 30;

/** A tagged section under its heading; the heading moves to the next page unless `keepWith` points fit below it. */
function section(canvas: Canvas, title: string, keepWith: number): PDFKit.PDFStructureElement {
  const sect = canvas.doc.struct('Sect');
  canvas.root.add(sect);
  ensureSpace(canvas, 26 + keepWith);
  block(canvas, sect, 'H2', title, headingStyle, 8);
  return sect;
}

function note(canvas: Canvas, parent: PDFKit.PDFStructureElement, text: string): void {
  block(canvas, parent, 'P', text, noteStyle, 14);
}

/** A section the tier leaves out: says so, and from which tier it is included (`from`, the first tier that has it). */
function notIncluded(canvas: Canvas, parent: PDFKit.PDFStructureElement, report: HistoryReport, from: ReportTier) {
  const upgrade =
    reportTiers.indexOf(from) > reportTiers.indexOf(report.tier) ? ` It is included from the ${from} tier.` : '';
  note(canvas, parent, `Not part of the ${report.tier} report.${upgrade}`);
}

function count(items: unknown[], one: string, many: string): string {
  return items.length === 0
    ? `No ${many} in the data range`
    : `${formatCount(items.length)} ${items.length === 1 ? one : many}`;
}

/** The cover's table of what each section holds, so a reader sees at once what is (not) covered. */
function contents(report: HistoryReport): string[][] {
  const outside = `Not part of the ${report.tier} report`;
  const { status, flags } = report.odometer_integrity;
  const { telematics } = report;
  return [
    ['Odometer integrity', status === 'flagged' ? `Flagged: ${count(flags, 'flag', 'flags')}` : humanize(status)],
    ['Service history', count(report.service_history, 'record', 'records')],
    ['Incidents', report.incidents === null ? outside : count(report.incidents, 'incident', 'incidents')],
    ['Ownership', report.ownership === null ? outside : count(report.ownership, 'owner', 'owners')],
    [
      'Telematics',
      telematics === null
        ? outside
        : `${count(telematics.monthly_mileage, 'month', 'months')} of mileage, ` +
          `${count(telematics.odometer_timeline, 'odometer reading', 'odometer readings')}`,
    ],
    ['Predictive insights', report.predictive_insights === null ? outside : 'Next oil change, brakes, battery'],
  ];
}

export function drawCover(canvas: Canvas, report: HistoryReport): void {
  const { doc } = canvas;
  const cover = doc.struct('Sect');
  canvas.root.add(cover);
  artifact(canvas, () => {
    doc.rect(margin.side, canvas.y, contentWidth, 3).fill(colour.accent);
  });
  canvas.y += 14;
  block(
    canvas,
    cover,
    'P',
    'VEHICLE HISTORY REPORT',
    { size: typeSize.small + 1, bold: true, colour: colour.accent },
    4,
  );
  block(canvas, cover, 'H1', vehicleTitle(report), { size: typeSize.title, bold: true }, 4);
  block(canvas, cover, 'P', `VIN ${report.vin}`, { size: typeSize.heading, colour: colour.muted }, 18);

  const verdict = historyVerdict(report);
  const colours = verdictColours[verdict.level];
  const inner = contentWidth - 32;
  const headlineStyle = { size: typeSize.heading + 1, bold: true, colour: colours.ink };
  const boxHeight =
    textHeight(canvas, verdict.headline, headlineStyle, inner) +
    verdict.findings.reduce((sum, finding) => sum + textHeight(canvas, finding, bodyStyle, inner) + 5, 0) +
    5 +
    24;
  const top = canvas.y;
  artifact(canvas, () => {
    doc.rect(margin.side, top, contentWidth, boxHeight).fill(colours.tint);
    doc.rect(margin.side, top, 5, boxHeight).fill(colours.ink);
  });
  const verdictSect = doc.struct('Sect');
  cover.add(verdictSect);
  canvas.y = top + 12;
  block(canvas, verdictSect, 'H2', verdict.headline, headlineStyle, 5, inner, margin.side + 18);
  for (const finding of verdict.findings)
    block(canvas, verdictSect, 'P', finding, bodyStyle, 5, inner, margin.side + 18);
  verdictSect.end();
  canvas.y = top + boxHeight + 18;

  drawTable(canvas, cover, {
    columns: [
      { header: 'Report', width: 0.3 },
      { header: 'Details', width: 0.7 },
    ],
    rowHeaders: true,
    rows: [
      ['Report ID', report.report_id],
      ['Tier', humanize(report.tier)],
      ['Data range', dataRangeText(report)],
      ['Generated', formatDateTime(report.generated_at)],
      ['Total miles', formatMiles(report.lifetime_metrics.total_miles)],
      [
        'First recorded',
        report.lifetime_metrics.first_recorded ? formatDate(report.lifetime_metrics.first_recorded) : noValue,
      ],
    ],
  });
  drawTable(canvas, cover, {
    columns: [
      { header: 'Section', width: 0.3 },
      { header: 'In this report', width: 0.7 },
    ],
    rowHeaders: true,
    rows: contents(report),
  });
  note(
    canvas,
    cover,
    'Distances are in miles. Owners are labelled in the order they held the vehicle and are never named; ' +
      'incident locations are given to city level. Each odometer flag names its rule and the readings that triggered it.',
  );
  cover.end();
}

function drawVehicleAndMetrics(canvas: Canvas, report: HistoryReport): void {
  const vehicle = section(canvas, 'Vehicle', withTable);
  const { make, model, year, trim } = report.vehicle;
  drawTable(canvas, vehicle, {
    columns: [
      { header: 'Field', width: 0.3 },
      { header: 'Value', width: 0.7 },
    ],
    rowHeaders: true,
    rows: [
      ['VIN', report.vin],
      ['Make', make ?? noValue],
      ['Model', model ?? noValue],
      ['Year', year === null ? noValue : String(year)],
      ['Trim', trim ?? noValue],
    ],
  });
  vehicle.end();

  const metrics = section(canvas, 'Lifetime metrics', withTable);
  const m = report.lifetime_metrics;
  drawTable(canvas, metrics, {
    columns: [
      { header: 'Metric', width: 0.45 },
      { header: 'Value', width: 0.55 },
    ],
    rowHeaders: true,
    rows: [
      ['Total miles', formatMiles(m.total_miles)],
      ['First recorded', m.first_recorded === null ? noValue : formatDate(m.first_recorded)],
      ['Average miles per year', formatMiles(m.avg_miles_per_year)],
      ['Driving score (0–100, higher is smoother)', formatCount(m.driving_score)],
      ['Harsh braking events', formatCount(m.harsh_braking_events)],
      ['Rapid acceleration events', formatCount(m.rapid_acceleration_events)],
      ['Average speed while moving', formatDecimal(m.avg_speed, ' mph')],
      ['Time at highway speed', formatDecimal(m.highway_percentage, ' %')],
    ],
  });
  metrics.end();
}

const ruleTitles: Record<string, string> = {
  backwards: 'Went backwards',
  impossible_rate: 'Impossible rate',
  source_conflict: 'Source conflict',
};

const statusTexts: Record<HistoryReport['odometer_integrity']['status'], string> = {
  consistent: 'Consistent: every reading in the data range follows the one before it at a possible rate.',
  flagged: 'Flagged: the readings below break an integrity rule. Each row names the rule and the readings.',
  insufficient_data: 'Insufficient data: too few odometer readings in the data range to check.',
};

function drawIntegrity(canvas: Canvas, report: HistoryReport): void {
  const sect = section(canvas, 'Odometer integrity', withNote);
  const { status, flags } = report.odometer_integrity;
  block(canvas, sect, 'P', statusTexts[status], bodyStyle, flags.length > 0 ? 8 : 14);
  if (flags.length > 0) {
    drawTable(canvas, sect, {
      columns: [
        { header: 'Rule', width: 0.17 },
        { header: 'Explanation', width: 0.5 },
        { header: 'Readings (odometer, source)', width: 0.33 },
      ],
      rows: flags.map((flag) => [
        ruleTitles[flag.rule] ?? humanize(flag.rule),
        flag.explanation,
        flag.readings
          .map((reading) => `${formatDateTime(reading.at)}\n${formatMiles(reading.miles)}, ${reading.source}`)
          .join('\n'),
      ]),
    });
  }
  sect.end();
}

function drawServiceHistory(canvas: Canvas, report: HistoryReport): void {
  const sect = section(canvas, 'Service history', report.service_history.length > 0 ? withTable : withNote);
  if (report.service_history.length === 0) {
    note(canvas, sect, 'No service records in the data range.');
  } else {
    drawTable(canvas, sect, {
      columns: [
        { header: 'Date', width: 0.15 },
        { header: 'Service', width: 0.33 },
        { header: 'Mileage', width: 0.15, align: 'right' },
        { header: 'Shop', width: 0.22 },
        { header: 'Verified', width: 0.15 },
      ],
      rows: report.service_history.map((entry) => [
        formatDate(entry.date),
        entry.type,
        formatMiles(entry.mileage),
        entry.shop ?? noValue,
        entry.verified ? 'Yes, telematics' : 'No',
      ]),
    });
    note(canvas, sect, 'Verified: the mileage came from the vehicle’s telematics at the time of the service.');
  }
  sect.end();
}

function drawIncidents(canvas: Canvas, report: HistoryReport): void {
  const sect = section(canvas, 'Incidents', report.incidents?.length ? withTable : withNote);
  if (report.incidents === null) notIncluded(canvas, sect, report, 'standard');
  else if (report.incidents.length === 0) note(canvas, sect, 'No incidents recorded in the data range.');
  else {
    drawTable(canvas, sect, {
      columns: [
        { header: 'Date', width: 0.15 },
        { header: 'Type', width: 0.25 },
        { header: 'Severity', width: 0.14 },
        { header: 'Location (city)', width: 0.3 },
        { header: 'Airbag deployed', width: 0.16 },
      ],
      rows: report.incidents.map((incident) => [
        formatDate(incident.date),
        humanize(incident.type),
        humanize(incident.severity),
        incident.location ?? noValue,
        formatYesNo(incident.airbag_deployment),
      ]),
    });
  }
  sect.end();
}

function drawOwnership(canvas: Canvas, report: HistoryReport): void {
  const sect = section(canvas, 'Ownership', report.ownership?.length ? withTable : withNote);
  if (report.ownership === null) notIncluded(canvas, sect, report, 'standard');
  else if (report.ownership.length === 0) note(canvas, sect, 'No ownership records in the data range.');
  else {
    drawTable(canvas, sect, {
      columns: [
        { header: 'Owner', width: 0.16 },
        { header: 'From', width: 0.19 },
        { header: 'To', width: 0.19 },
        { header: 'Miles driven', width: 0.23, align: 'right' },
        { header: 'Trips per day', width: 0.23, align: 'right' },
      ],
      rows: report.ownership.map((owner) => [
        owner.owner,
        formatDate(owner.start_date),
        owner.end_date === 'present' ? 'Present' : formatDate(owner.end_date),
        formatMiles(owner.miles_driven),
        formatDecimal(owner.avg_trips_per_day),
      ]),
    });
  }
  sect.end();
}

function drawTelematics(canvas: Canvas, report: HistoryReport): void {
  const { telematics } = report;
  const heading = 20;
  const firstPart =
    telematics === null ? withNote : heading + (telematics.odometer_timeline.length > 0 ? chartSpace : withNote);
  const sect = section(canvas, 'Telematics', firstPart);
  if (telematics === null) {
    notIncluded(canvas, sect, report, 'comprehensive');
    sect.end();
    return;
  }
  ensureSpace(canvas, firstPart);
  block(canvas, sect, 'H3', 'Odometer timeline', subheadingStyle, 6);
  if (telematics.odometer_timeline.length === 0) note(canvas, sect, 'No odometer readings in the data range.');
  else drawOdometerChart(canvas, sect, telematics.odometer_timeline);

  ensureSpace(canvas, heading + (telematics.monthly_mileage.length > 0 ? chartSpace : withNote));
  block(canvas, sect, 'H3', 'Monthly mileage', subheadingStyle, 6);
  if (telematics.monthly_mileage.length === 0) note(canvas, sect, 'No mileage recorded in the data range.');
  else {
    drawMonthlyMileageChart(canvas, sect, telematics.monthly_mileage);
    const shortMonths = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
    drawTable(canvas, sect, {
      columns: [
        { header: 'Year', width: 0.09 },
        ...shortMonths.map((month) => ({ header: month, width: 0.066, align: 'right' as const })),
        { header: 'Total', width: 0.118, align: 'right' },
      ],
      rows: mileageByYear(telematics.monthly_mileage).map((year) => [
        year.year,
        ...year.months.map((miles) => (miles === undefined ? '' : miles === null ? noValue : formatCount(miles))),
        formatCount(year.total),
      ]),
      cellPadding: 2.5,
    });
    note(canvas, sect, 'Miles driven per calendar month (UTC). A dash marks a month in the range with no record.');
  }
  sect.end();
}

/**
 * Monthly mileage as a year-by-month grid (a year per row reads far better than one row per
 * month). `undefined` is a month outside the range, `null` a month inside it with no record.
 */
export function mileageByYear(
  monthly: Array<{ month: string; miles: number }>,
): Array<{ year: string; months: Array<number | null | undefined>; total: number }> {
  if (monthly.length === 0) return [];
  const byMonth = new Map(monthly.map((entry) => [entry.month, entry.miles]));
  const sorted = [...byMonth.keys()].sort();
  const [first, last] = [sorted[0]!, sorted[sorted.length - 1]!];
  const years: Array<{ year: string; months: Array<number | null | undefined>; total: number }> = [];
  for (let year = Number(first.slice(0, 4)); year <= Number(last.slice(0, 4)); year += 1) {
    const months = Array.from({ length: 12 }, (_, index) => {
      const key = `${year}-${String(index + 1).padStart(2, '0')}`;
      if (key < first || key > last) return undefined;
      return byMonth.get(key) ?? null;
    });
    years.push({ year: String(year), months, total: months.reduce<number>((sum, miles) => sum + (miles ?? 0), 0) });
  }
  return years;
}

function drawPredictive(canvas: Canvas, report: HistoryReport): void {
  const sect = section(canvas, 'Predictive insights', report.predictive_insights ? withTable : withNote);
  const insights = report.predictive_insights;
  if (insights === null) notIncluded(canvas, sect, report, 'lifetime');
  else {
    drawTable(canvas, sect, {
      columns: [
        { header: 'Item', width: 0.3 },
        { header: 'Outlook', width: 0.7 },
      ],
      rowHeaders: true,
      rows: [
        ['Next oil change', insights.next_oil_change],
        ['Brake replacement', insights.brake_replacement],
        ['Battery health', insights.battery_health],
      ],
    });
  }
  sect.end();
}

/** Every section after the cover, which ends on its own page. */
export function drawSections(canvas: Canvas, report: HistoryReport): void {
  newPage(canvas);
  drawVehicleAndMetrics(canvas, report);
  drawIntegrity(canvas, report);
  drawServiceHistory(canvas, report);
  drawIncidents(canvas, report);
  drawOwnership(canvas, report);
  drawTelematics(canvas, report);
  drawPredictive(canvas, report);
}
