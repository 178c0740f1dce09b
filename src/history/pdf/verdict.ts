/**
 * The cover's verdict: one headline and a line per finding, from the two sections a buyer checks
 * first (odometer integrity and incidents). Pure, so every rule is tested without drawing a page.
 *
 * Levels, most serious first:
 * - attention: the odometer was flagged, or an incident deployed an airbag or was high/critical.
 * - caution: other incidents on record, odometer not flagged.
 * - unknown: too few odometer readings to judge and nothing else found.
 * - clear: odometer consistent and no incidents (or incidents not part of the tier).
 */
import type { HistoryReport, IntegrityFlag } from '../types.js';

export type VerdictLevel = 'attention' | 'caution' | 'unknown' | 'clear';

export interface Verdict {
  level: VerdictLevel;
  headline: string;
  /** One sentence per finding, odometer first. */
  findings: string[];
}

const ruleNouns: Record<IntegrityFlag['rule'], [string, string]> = {
  backwards: ['reading went backwards', 'readings went backwards'],
  impossible_rate: ['jump faster than the elapsed time allows', 'jumps faster than the elapsed time allows'],
  source_conflict: ['conflict between sources', 'conflicts between sources'],
};

const seriousSeverities = new Set(['high', 'critical', 'severe']);

function plural(count: number, [one, many]: [string, string]): string {
  return `${count} ${count === 1 ? one : many}`;
}

function odometerFinding(report: Pick<HistoryReport, 'odometer_integrity'>): string {
  const { status, flags } = report.odometer_integrity;
  if (status === 'insufficient_data') return 'Odometer: too few readings in the data range to check.';
  if (status === 'consistent' || flags.length === 0) return 'Odometer: consistent, no reading flagged.';
  const counts = (Object.keys(ruleNouns) as IntegrityFlag['rule'][])
    .map((rule) => [rule, flags.filter((flag) => flag.rule === rule).length] as const)
    .filter(([, count]) => count > 0)
    .map(([rule, count]) => plural(count, ruleNouns[rule]));
  return `Odometer: ${counts.join(', ')}.`;
}

function isSerious(incident: NonNullable<HistoryReport['incidents']>[number]): boolean {
  return incident.airbag_deployment || seriousSeverities.has(incident.severity.toLowerCase());
}

function incidentFinding(report: Pick<HistoryReport, 'incidents' | 'tier'>): string {
  const { incidents } = report;
  if (incidents === null) return `Incidents: not part of the ${report.tier} report.`;
  if (incidents.length === 0) return 'Incidents: none recorded in the data range.';
  const airbags = incidents.filter((incident) => incident.airbag_deployment).length;
  const total = plural(incidents.length, ['incident', 'incidents']);
  return airbags > 0
    ? `Incidents: ${total}, ${plural(airbags, ['with airbag deployment', 'with airbag deployment'])}.`
    : `Incidents: ${total} recorded.`;
}

export function historyVerdict(report: Pick<HistoryReport, 'odometer_integrity' | 'incidents' | 'tier'>): Verdict {
  const findings = [odometerFinding(report), incidentFinding(report)];
  const incidents = report.incidents ?? [];
  const flagged = report.odometer_integrity.status === 'flagged' && report.odometer_integrity.flags.length > 0;
  if (flagged) return { level: 'attention', headline: 'Odometer history needs attention', findings };
  if (incidents.some(isSerious)) return { level: 'attention', headline: 'Serious incident on record', findings };
  if (incidents.length > 0) return { level: 'caution', headline: 'Incidents on record', findings };
  if (report.odometer_integrity.status === 'insufficient_data') {
    return { level: 'unknown', headline: 'Not enough odometer data to judge', findings };
  }
  const headline = report.incidents === null ? 'Odometer consistent' : 'Odometer consistent, no incidents recorded';
  return { level: 'clear', headline, findings };
}
