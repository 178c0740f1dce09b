/**
 * The history report PDF checked on its real bytes with poppler (pdfinfo, pdffonts, pdftotext),
 * the tools a reader's viewer resembles: page count, title, tagging and structure, embedded
 * fonts, each section's text, headers repeated on every page a table continues on, and identical
 * bytes for the same report.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { renderHistoryReportPdf } from '../../src/history/pdf/render.js';
import { reportTiers, type HistoryReport } from '../../src/history/types.js';
import { sampleHistoryReport, sampleVin } from '../helpers/history-report.js';

const dir = mkdtempSync(join(tmpdir(), 'history-pdf-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const creationDate = new Date('2026-11-20T16:00:00Z');

async function chunksOf(stream: Readable): Promise<Buffer[]> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return chunks;
}

async function render(report: HistoryReport, date: Date | undefined = creationDate): Promise<Buffer> {
  return Buffer.concat(await chunksOf(renderHistoryReportPdf(report, date ? { creationDate: date } : {})));
}

let fileCount = 0;
async function renderToFile(report: HistoryReport): Promise<string> {
  const path = join(dir, `report-${(fileCount += 1)}.pdf`);
  writeFileSync(path, await render(report));
  return path;
}

const run = (tool: string, ...args: string[]) => execFileSync(tool, args, { encoding: 'utf8' });

function info(path: string): Record<string, string> {
  return Object.fromEntries(
    run('pdfinfo', path)
      .split('\n')
      .filter((line) => line.includes(':'))
      .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()]),
  );
}

function pageText(path: string, page: number): string {
  return run('pdftotext', '-layout', '-f', String(page), '-l', String(page), path, '-');
}

const text = (path: string) => run('pdftotext', '-layout', path, '-');

describe('history report PDF', () => {
  it.each(reportTiers)('%s tier: a valid, titled, tagged PDF/UA document with embedded fonts', async (tier) => {
    const path = await renderToFile(sampleHistoryReport(tier));
    const meta = info(path);
    expect(meta['PDF version']).toBe('1.7');
    expect(meta['Tagged']).toBe('yes');
    expect(meta['Title']).toBe(`Vehicle history report: 2003 Honda Accord EX, VIN ${sampleVin}`);
    expect(Number(meta['Pages'])).toBeGreaterThanOrEqual(2);
    expect(Number(meta['Pages'])).toBeLessThanOrEqual(6);
    expect(new Date(meta['CreationDate']!).toISOString()).toBe(creationDate.toISOString());

    const fonts = run('pdffonts', path).split('\n').slice(2).filter(Boolean);
    expect(fonts.length).toBeGreaterThan(0);
    for (const font of fonts) {
      expect(font).toMatch(/\+DejaVuSans(-Bold)?\s/);
      // Columns: type, encoding, emb, sub, uni: every font embedded, subset, with a Unicode map.
      expect(font).toMatch(/Identity-H\s+yes\s+yes\s+yes/);
    }

    const raw = (await render(sampleHistoryReport(tier))).toString('latin1');
    expect(raw).toContain('/Lang (en-US)');
    expect(raw).toContain('/DisplayDocTitle true');
    expect(raw).toContain('<pdfuaid:part>1</pdfuaid:part>');

    const structure = run('pdfinfo', '-struct', path);
    expect(structure.startsWith('Document')).toBe(true);
    for (const element of ['H1', 'H2', 'Table', 'TR', 'TH', 'TD', 'Sect']) expect(structure).toContain(element);
    expect(structure).toContain('/Scope /Column');
  });

  it('shows each section of the tier and says which tier adds the others', async () => {
    const basic = text(await renderToFile(sampleHistoryReport('basic')));
    for (const heading of ['Vehicle', 'Lifetime metrics', 'Odometer integrity', 'Service history', 'Incidents'])
      expect(basic).toContain(heading);
    expect(basic).toContain('Odometer consistent');
    expect(basic).toContain('Oil change');
    expect(basic).toMatch(/Not part of the basic report\. It is included from the standard tier\./);
    expect(basic).toMatch(/Not part of the basic report\. It is included from the comprehensive tier\./);
    expect(basic).toMatch(/Not part of the basic report\. It is included from the lifetime tier\./);

    const lifetime = text(await renderToFile(sampleHistoryReport('lifetime')));
    expect(lifetime).not.toContain('Not part of');
    for (const expected of [
      'Owner 1',
      'Owner 2',
      'Present',
      'Austin, Texas, US',
      'Odometer timeline',
      'Monthly mileage',
    ]) {
      expect(lifetime).toContain(expected);
    }
    expect(lifetime).toContain('In about 1,800 mi (around Jan 2027)');
  });

  it('labels owners and never prints anything but the labels about them', async () => {
    const report = sampleHistoryReport('standard');
    const pdf = text(await renderToFile(report));
    expect(pdf).toContain('Owner 1');
    expect(pdf).toContain('Owner 2');
    // The report type holds no company field; the PDF adds none (no "company", "fleet" or ids).
    expect(pdf.toLowerCase()).not.toMatch(/company|customer|fleet id|company_id/);
  });

  it('explains each odometer flag with its rule and readings, marks them on the chart, and states the verdict', async () => {
    const path = await renderToFile(sampleHistoryReport('comprehensive', 'flagged'));
    const pdf = text(path);
    expect(pdf).toContain('Odometer history needs attention');
    for (const rule of ['Went backwards', 'Impossible rate', 'Source conflict']) expect(pdf).toContain(rule);
    expect(pdf).toContain('Jun 9, 2026 08:00 UTC');
    expect(pdf).toMatch(/47,020 mi,\s+manual/);
    expect(pdf).toContain('flagged reading');
    expect(pdf).toContain('Incidents: 2 incidents, 1 with airbag deployment.');
    expect(pdf).toMatch(/Jul 4, 2026\s+Impact\s+High\s+Round Rock, Texas, US\s+Yes/);
    const structure = run('pdfinfo', '-struct', path);
    expect(structure.match(/Figure/g)).toHaveLength(2);
  });

  it('says so when included sections are empty', async () => {
    const pdf = text(await renderToFile(sampleHistoryReport('lifetime', 'empty')));
    expect(pdf).toContain('Not enough odometer data to judge');
    expect(pdf).toContain('No service records in the data range.');
    expect(pdf).toContain('No incidents recorded in the data range.');
    expect(pdf).toContain('No ownership records in the data range.');
    expect(pdf).toContain('No odometer readings in the data range.');
    expect(pdf).toContain('No mileage recorded in the data range.');
  });

  it('repeats a table header on every page the table continues on', async () => {
    const report = sampleHistoryReport('comprehensive', 'many_rows');
    const path = await renderToFile(report);
    const pages = Number(info(path)['Pages']);
    const header = /Date\s+Service\s+Mileage\s+Shop\s+Verified/;
    const row =
      /\w{3} \d{1,2}, \d{4}\s+(Oil change|Tire rotation|Brake pads replaced|Battery replaced|Annual inspection)\s/;
    const pagesWithRows = Array.from({ length: pages }, (_, index) => index + 1).filter((page) =>
      row.test(pageText(path, page)),
    );
    expect(pagesWithRows.length).toBeGreaterThanOrEqual(3);
    for (const page of pagesWithRows) expect(pageText(path, page), `page ${page}`).toMatch(header);
    // Every one of the 90 rows is printed once, none lost at a page break.
    const printed = pagesWithRows.flatMap((page) =>
      pageText(path, page)
        .split('\n')
        .filter((line) => row.test(line)),
    );
    expect(printed).toHaveLength(report.service_history.length);
    // The repeated header is an artifact: the structure tree holds the header row once.
    const structure = run('pdfinfo', '-struct-text', path);
    expect(structure.match(/"Verified"/g)).toHaveLength(1);
  });

  it('never splits a short table or leaves a heading alone at the foot of a page', async () => {
    const headings = [
      'Vehicle',
      'Lifetime metrics',
      'Odometer integrity',
      'Service history',
      'Incidents',
      'Ownership',
      'Telematics',
      'Predictive insights',
    ];
    for (const tier of reportTiers) {
      for (const variant of ['typical', 'flagged', 'empty', 'many_rows'] as const) {
        const path = await renderToFile(sampleHistoryReport(tier, variant));
        const pages = Number(info(path)['Pages']);
        for (let page = 1; page <= pages; page += 1) {
          const lines = pageText(path, page)
            .split('\n')
            .map((line) => line.trim())
            .filter((line) => line !== '' && !line.startsWith('VIN '));
          expect(headings, `${tier} ${variant} page ${page}`).not.toContain(lines[lines.length - 1]);
          const owners = lines.filter((line) => /^Owner \d/.test(line)).length;
          expect([0, sampleHistoryReport(tier, variant).ownership?.length ?? 0]).toContain(owners);
        }
      }
    }
  });

  it('keeps a very long cell on the page (cut with an ellipsis) and draws years of daily readings', async () => {
    const report = sampleHistoryReport('lifetime', 'flagged');
    report.service_history[0]!.type = 'Brake inspection and cleaning '.repeat(200);
    const start = Date.parse('2016-01-01T00:00:00Z');
    report.telematics!.odometer_timeline = Array.from({ length: 7300 }, (_, index) => ({
      at: new Date(start + index * 43_200_000).toISOString(),
      miles: 1000 + index * 20,
      source: 'geotab',
      flagged: index === 5000,
    }));
    const path = await renderToFile(report);
    expect(Number(info(path)['Pages'])).toBeLessThanOrEqual(6);
    const pdf = text(path);
    expect(pdf).toContain('…');
    expect(pdf).toContain('7,300 odometer readings');
    // The chart's alternative text (in the Figure's structure element) describes the series.
    expect(readFileSync(path, 'latin1')).toContain('/Alt (Odometer timeline: 7,300 readings from Jan 1, 2016');
    expect(run('pdfinfo', '-struct-text', path)).toContain('Brake inspection and cleaning');
  });

  it('gives the same bytes for the same report and creation date, as a stream', async () => {
    const report = sampleHistoryReport('lifetime', 'flagged');
    const first = await render(report);
    const second = await render(sampleHistoryReport('lifetime', 'flagged'));
    expect(first.equals(second)).toBe(true);
    expect(first.subarray(0, 5).toString()).toBe('%PDF-');
    // Without a creation date the report's generated_at is used: still deterministic.
    expect((await render(report, undefined)).equals(await render(report, undefined))).toBe(true);
    expect((await render(report, new Date('2027-01-01T00:00:00Z'))).equals(first)).toBe(false);
    expect(renderHistoryReportPdf(report, { creationDate })).toBeInstanceOf(Readable);
  });
});
