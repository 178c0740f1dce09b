import { describe, expect, it } from 'vitest';
import { monthlyMileageAlt, odometerChartAlt } from '../../../src/history/pdf/charts.js';
import {
  formatDate,
  formatDateTime,
  formatMiles,
  formatMonth,
  formatTimeTick,
  humanize,
} from '../../../src/history/pdf/format.js';
import { mileageByYear, vehicleTitle } from '../../../src/history/pdf/sections.js';
import { historyVerdict } from '../../../src/history/pdf/verdict.js';
import type { HistoryReport } from '../../../src/history/types.js';
import { sampleHistoryReport } from '../../helpers/history-report.js';

type Incident = NonNullable<HistoryReport['incidents']>[number];
const incident = (overrides: Partial<Incident> = {}): Incident => ({
  date: '2026-03-11',
  type: 'hard_deceleration',
  severity: 'low',
  location: 'Austin, Texas, US',
  coordinates: { lat: 30.3, lon: -97.7 },
  airbag_deployment: false,
  ...overrides,
});

describe('history report verdict', () => {
  const consistent = { status: 'consistent' as const, flags: [] };

  it('is clear when the odometer is consistent and no incident is on record', () => {
    const verdict = historyVerdict({ tier: 'standard', odometer_integrity: consistent, incidents: [] });
    expect(verdict).toEqual({
      level: 'clear',
      headline: 'Odometer consistent, no incidents recorded',
      findings: ['Odometer: consistent, no reading flagged.', 'Incidents: none recorded in the data range.'],
    });
  });

  it('does not claim "no incidents" when the tier does not include them', () => {
    const verdict = historyVerdict({ tier: 'basic', odometer_integrity: consistent, incidents: null });
    expect(verdict.level).toBe('clear');
    expect(verdict.headline).toBe('Odometer consistent');
    expect(verdict.findings[1]).toBe('Incidents: not part of the basic report.');
  });

  it('needs attention when any integrity rule fired, and counts the flags per rule', () => {
    const report = sampleHistoryReport('standard', 'flagged');
    const verdict = historyVerdict({ ...report, incidents: [] });
    expect(verdict.level).toBe('attention');
    expect(verdict.headline).toBe('Odometer history needs attention');
    expect(verdict.findings[0]).toBe(
      'Odometer: 1 reading went backwards, 1 jump faster than the elapsed time allows, 1 conflict between sources.',
    );
  });

  it('needs attention for an airbag deployment or a high/critical incident even with a consistent odometer', () => {
    for (const serious of [
      incident({ airbag_deployment: true }),
      incident({ severity: 'high' }),
      incident({ severity: 'Critical' }),
    ]) {
      const verdict = historyVerdict({ tier: 'standard', odometer_integrity: consistent, incidents: [serious] });
      expect(verdict.level).toBe('attention');
      expect(verdict.headline).toBe('Serious incident on record');
    }
    const airbag = historyVerdict({
      tier: 'standard',
      odometer_integrity: consistent,
      incidents: [incident(), incident({ airbag_deployment: true })],
    });
    expect(airbag.findings[1]).toBe('Incidents: 2 incidents, 1 with airbag deployment.');
  });

  it('is caution for minor incidents only', () => {
    const verdict = historyVerdict({ tier: 'standard', odometer_integrity: consistent, incidents: [incident()] });
    expect(verdict).toMatchObject({ level: 'caution', headline: 'Incidents on record' });
    expect(verdict.findings[1]).toBe('Incidents: 1 incident recorded.');
  });

  it('is unknown when the odometer has too few readings and nothing else was found', () => {
    const verdict = historyVerdict({
      tier: 'standard',
      odometer_integrity: { status: 'insufficient_data', flags: [] },
      incidents: [],
    });
    expect(verdict).toMatchObject({ level: 'unknown', headline: 'Not enough odometer data to judge' });
    expect(verdict.findings[0]).toBe('Odometer: too few readings in the data range to check.');
  });

  it('ranks a flagged odometer above incidents, and incidents above missing data', () => {
    const flagged = sampleHistoryReport('standard', 'flagged');
    expect(historyVerdict(flagged).headline).toBe('Odometer history needs attention');
    const verdict = historyVerdict({
      tier: 'standard',
      odometer_integrity: { status: 'insufficient_data', flags: [] },
      incidents: [incident()],
    });
    expect(verdict.level).toBe('caution');
  });
});

describe('history report PDF text', () => {
  it('spells dates in UTC the same everywhere', () => {
    expect(formatDate('2026-03-04')).toBe('Mar 4, 2026');
    expect(formatDate('2026-03-04T23:30:00-05:00')).toBe('Mar 5, 2026');
    expect(formatDateTime('2026-11-20T15:30:00.000Z')).toBe('Nov 20, 2026 15:30 UTC');
    expect(formatMonth('2025-12')).toBe('Dec 2025');
    const tick = (iso: string) => new Date(`${iso}T00:00:00Z`);
    expect(formatTimeTick(tick('2025-01-01'))).toBe('2025');
    expect(formatTimeTick(tick('2025-07-01'))).toBe('Jul 2025');
    expect(formatTimeTick(tick('2025-07-01'), tick('2025-04-01'))).toBe('Jul');
    expect(formatTimeTick(tick('2025-07-01'), tick('2024-10-01'))).toBe('Jul 2025');
    expect(formatTimeTick(tick('2025-07-15'))).toBe('Jul 15, 2025');
    expect(formatTimeTick(tick('2025-07-15'), tick('2025-07-08'))).toBe('Jul 15');
  });

  it('shows miles with separators and null as a dash', () => {
    expect(formatMiles(48210.4)).toBe('48,210 mi');
    expect(formatMiles(null)).toBe('—');
    expect(humanize('impossible_rate')).toBe('Impossible rate');
  });

  it('titles the vehicle from the parts it has', () => {
    expect(vehicleTitle(sampleHistoryReport('basic'))).toBe('2003 Honda Accord EX');
    const unknown = sampleHistoryReport('basic');
    unknown.vehicle = { make: null, model: null, year: null, trim: null };
    expect(vehicleTitle(unknown)).toBe('Vehicle');
  });

  it('lays monthly mileage out a year per row, blank outside the range and a gap marked inside it', () => {
    const grid = mileageByYear([
      { month: '2025-11', miles: 100 },
      { month: '2026-01', miles: 300 },
      { month: '2025-12', miles: 200 },
      { month: '2026-03', miles: 50 },
    ]);
    expect(grid).toEqual([
      { year: '2025', months: [...Array(10).fill(undefined), 100, 200], total: 300 },
      { year: '2026', months: [300, null, 50, ...Array(9).fill(undefined)], total: 350 },
    ]);
    expect(mileageByYear([])).toEqual([]);
  });

  it('describes each chart in words for readers who cannot see it', () => {
    const report = sampleHistoryReport('lifetime', 'flagged');
    const telematics = report.telematics!;
    expect(odometerChartAlt(telematics.odometer_timeline)).toMatch(
      /^Odometer timeline: 54 readings from Dec 28, 2022 \(.+ mi\) to Nov 28, 2026 \(.+ mi\), from manual, samsara, service; 6 flagged by an integrity rule\.$/,
    );
    expect(odometerChartAlt([])).toBe('Odometer timeline: no readings in the data range.');
    expect(
      monthlyMileageAlt([
        { month: '2026-01', miles: 1000 },
        { month: '2026-02', miles: 3000 },
      ]),
    ).toBe(
      'Miles driven per month from Jan 2026 to Feb 2026: 4,000 mi in 2 months, an average of 2,000 mi a month; highest 3,000 mi in Feb 2026.',
    );
  });
});
