/**
 * Diagnostic trouble codes (docs/health.md "Sources" `check_engine_light`, `abs_warning`,
 * `airbag_warning`, `transmission_fault`): one alert per active code, keyed by the code.
 *
 * - A `dtcs` sample is the vehicle's full list of active codes, so a code missing from it is a
 *   candidate for clearing. It clears only after `clearAfterReports` consecutive reports without
 *   it: scanners miss a code now and then, and one missed report must not resolve and reopen it.
 * - A code's alert type is fixed when it first appears; its severity can rise (the MIL comes on)
 *   but does not drop back while the code stays active.
 * - `check_engine_light` true with no active code (a provider that reports the lamp but not the
 *   codes) raises one `mil` alert until a false sample arrives.
 *
 * State is JSON and bounded: the active codes (at most `maxActiveCodes`) and the last lamp value.
 */
import { dtcSystem, type DtcSystem } from '../../domain/sample.js';
import type { AlertSeverity } from '../../domain/vehicle.js';
import type { ActiveAlert } from '../../domain/health.js';
import type { Rule } from '../types.js';

type DtcAlertType = 'abs_warning' | 'airbag_warning' | 'transmission_fault' | 'check_engine_light';

export interface ActiveCodeState {
  type: DtcAlertType;
  severity: AlertSeverity;
  /** Consecutive `dtcs` reports without this code. */
  missedReports: number;
}

export interface DiagnosticCodesState {
  /** Active codes by (normalized) code. */
  codes: Record<string, ActiveCodeState>;
  /** The last `check_engine_light` sample. */
  milOn: boolean;
}

/** A real vehicle reports a handful of codes; this only bounds the state against a broken feed. */
const maxActiveCodes = 64;
const MIL_KEY = 'mil';
const severityRank: Record<AlertSeverity, number> = { info: 0, low: 1, medium: 2, high: 3, critical: 4 };
const systems: readonly DtcSystem[] = ['powertrain', 'chassis', 'body', 'network', 'j1939', 'unknown'];
const displayPrefix: Record<DtcAlertType, string> = {
  abs_warning: 'ABS warning',
  airbag_warning: 'Airbag warning',
  transmission_fault: 'Transmission fault',
  check_engine_light: 'Check engine',
};

function initialDiagnosticCodesState(): DiagnosticCodesState {
  return { codes: {}, milOn: false };
}

interface ReportedCode {
  code: string;
  system: DtcSystem;
  mil: boolean;
}

/** The codes of a `dtcs` sample, or null when the value is not a list (then it is no report). */
function reportedCodes(value: unknown): ReportedCode[] | null {
  if (!Array.isArray(value)) return null;
  const codes = new Map<string, ReportedCode>();
  for (const entry of value) {
    if (typeof entry !== 'object' || entry === null) continue;
    const raw = entry as Record<string, unknown>;
    if (typeof raw.code !== 'string') continue;
    const code = raw.code.trim().toUpperCase();
    if (!code || codes.has(code)) continue;
    // The provider's system, unless it had none: then the code's letter tells.
    const given = systems.find((system) => system === raw.system);
    const system = given && given !== 'unknown' ? given : dtcSystem(code);
    codes.set(code, { code, system, mil: raw.mil === true });
  }
  return [...codes.values()];
}

function classify({ code, system, mil }: ReportedCode): { type: DtcAlertType; severity: AlertSeverity } {
  switch (system) {
    case 'chassis':
      return { type: 'abs_warning', severity: 'high' };
    case 'body':
      return { type: 'airbag_warning', severity: 'high' };
    case 'powertrain':
      // P07xx / P08xx: the third character 7 or 8 is the transmission group.
      if (code[2] === '7' || code[2] === '8') return { type: 'transmission_fault', severity: mil ? 'high' : 'medium' };
      return { type: 'check_engine_light', severity: 'medium' };
    case 'network':
      return { type: 'check_engine_light', severity: mil ? 'medium' : 'low' };
    case 'j1939':
    case 'unknown':
      return { type: 'check_engine_light', severity: 'medium' };
  }
}

function applyReport(
  state: DiagnosticCodesState,
  reported: readonly ReportedCode[],
  clearAfterReports: number,
): DiagnosticCodesState {
  const codes: Record<string, ActiveCodeState> = {};
  const present = new Set<string>();
  for (const entry of reported) {
    if (Object.keys(codes).length >= maxActiveCodes) break;
    present.add(entry.code);
    const current = state.codes[entry.code];
    const { type, severity } = classify(entry);
    if (!current) {
      codes[entry.code] = { type, severity, missedReports: 0 };
      continue;
    }
    // A provider naming another system for the same code changes neither type nor severity.
    const escalates = type === current.type && severityRank[severity] > severityRank[current.severity];
    codes[entry.code] = { ...current, severity: escalates ? severity : current.severity, missedReports: 0 };
  }
  for (const [code, current] of Object.entries(state.codes)) {
    if (present.has(code) || Object.keys(codes).length >= maxActiveCodes) continue;
    const missedReports = current.missedReports + 1;
    if (missedReports < clearAfterReports) codes[code] = { ...current, missedReports };
  }
  return { ...state, codes };
}

function alertsOf(state: DiagnosticCodesState): ActiveAlert[] {
  const entries = Object.entries(state.codes).sort(([a], [b]) => a.localeCompare(b));
  if (entries.length === 0) {
    return state.milOn
      ? [
          {
            key: MIL_KEY,
            severity: 'medium',
            type: 'check_engine_light',
            display_name: 'Check engine light on',
            due_date: null,
            due_miles_remaining: null,
          },
        ]
      : [];
  }
  return entries.map(([code, active]) => ({
    key: code,
    severity: active.severity,
    type: active.type,
    display_name: `${displayPrefix[active.type]}: ${code}`,
    due_date: null,
    due_miles_remaining: null,
  }));
}

export const diagnosticCodesRule: Rule<DiagnosticCodesState> = {
  name: 'diagnostic_codes',
  initial: initialDiagnosticCodesState,
  evaluate(prev, input, config) {
    let state = prev;
    for (const sample of input.samples) {
      if (sample.signal === 'dtcs') {
        const reported = reportedCodes(sample.value);
        if (reported) state = applyReport(state, reported, config.dtc.clearAfterReports);
      } else if (sample.signal === 'check_engine_light' && typeof sample.value === 'boolean') {
        state = { ...state, milOn: sample.value };
      }
    }
    return { state, alerts: alertsOf(state), recheckAtMs: null };
  },
};
