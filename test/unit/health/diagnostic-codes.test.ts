import { describe, expect, it } from 'vitest';
import { effectiveHealthConfig, type HealthConfig } from '../../../src/domain/health-config.js';
import { diagnosticCodesRule } from '../../../src/health/rules/diagnostic-codes.js';
import type { ActiveAlert } from '../../../src/domain/health.js';
import type { RuleSample } from '../../../src/domain/sample.js';
import { at, ruleVehicle } from '../../helpers/rule-harness.js';

interface Code {
  code: unknown;
  system?: unknown;
  mil?: unknown;
}
const code = (value: string, system: string, mil = false): Code => ({ code: value, system, mil });
let clock = 0;
/** One `dtcs` report: the full list of the vehicle's active codes. */
const report = (...codes: Code[]): RuleSample => ({
  signal: 'dtcs',
  recordedAt: at(clock++),
  value: codes,
  source: 'generic',
});
const lamp = (value: unknown): RuleSample => ({
  signal: 'check_engine_light',
  recordedAt: at(clock++),
  value,
  source: 'generic',
});

function alert(key: string, type: string, severity: ActiveAlert['severity'], displayName: string): ActiveAlert {
  return { key, severity, type, display_name: displayName, due_date: null, due_miles_remaining: null };
}
const checkEngine = (key: string, severity: ActiveAlert['severity'] = 'medium') =>
  alert(key, 'check_engine_light', severity, `Check engine: ${key}`);
const milAlert = alert('mil', 'check_engine_light', 'medium', 'Check engine light on');

function vehicle(config?: HealthConfig) {
  const v = ruleVehicle(diagnosticCodesRule, config);
  return {
    feed: (...samples: RuleSample[]) => v.feed(samples, clock),
    get state() {
      return v.state;
    },
  };
}

describe('diagnostic codes: classification', () => {
  it('maps each active code to its alert type and severity, one alert per code keyed by the code', () => {
    const v = vehicle();
    expect(
      v.feed(
        report(
          code('P0420', 'powertrain', true),
          code('P0171', 'powertrain'),
          code('C0035', 'chassis'),
          code('B0001', 'body'),
          code('P0700', 'powertrain'),
          code('P0841', 'powertrain', true),
          code('U0100', 'network'),
          code('U0101', 'network', true),
          code('SPN110-FMI0', 'j1939'),
          code('X1234', 'unknown'),
        ),
      ),
    ).toEqual([
      alert('B0001', 'airbag_warning', 'high', 'Airbag warning: B0001'),
      alert('C0035', 'abs_warning', 'high', 'ABS warning: C0035'),
      checkEngine('P0171'),
      checkEngine('P0420'),
      alert('P0700', 'transmission_fault', 'medium', 'Transmission fault: P0700'),
      alert('P0841', 'transmission_fault', 'high', 'Transmission fault: P0841'),
      checkEngine('SPN110-FMI0'),
      checkEngine('U0100', 'low'),
      checkEngine('U0101'),
      checkEngine('X1234'),
    ]);
  });

  it('only the third character 7 or 8 of a P-code is a transmission fault', () => {
    const v = vehicle();
    expect(
      v.feed(report(code('P0699', 'powertrain'), code('P0900', 'powertrain'), code('P2800', 'powertrain', true))),
    ).toEqual([
      checkEngine('P0699'),
      checkEngine('P0900'),
      alert('P2800', 'transmission_fault', 'high', 'Transmission fault: P2800'),
    ]);
  });

  it('takes the system from the code letter when the provider gives none, and normalizes the code', () => {
    const v = vehicle();
    expect(
      v.feed(
        report(
          { code: ' c1234 ' },
          { code: 'b1000', system: 'unknown' },
          { code: 'p0715', system: 'bogus', mil: 'yes' },
        ),
      ),
    ).toEqual([
      alert('B1000', 'airbag_warning', 'high', 'Airbag warning: B1000'),
      alert('C1234', 'abs_warning', 'high', 'ABS warning: C1234'),
      alert('P0715', 'transmission_fault', 'medium', 'Transmission fault: P0715'),
    ]);
  });

  it('a code listed twice in one report is one alert', () => {
    expect(vehicle().feed(report(code('P0420', 'powertrain'), code('P0420', 'powertrain', true)))).toEqual([
      checkEngine('P0420'),
    ]);
  });
});

describe('diagnostic codes: active set', () => {
  it('clears a code only after 2 consecutive reports without it', () => {
    const v = vehicle();
    expect(v.feed(report(code('P0420', 'powertrain')))).toEqual([checkEngine('P0420')]);
    expect(v.feed(report())).toEqual([checkEngine('P0420')]);
    expect(v.feed(report())).toEqual([]);
    expect(v.state.codes).toEqual({});
  });

  it('a code missing from every other report never flaps', () => {
    const v = vehicle();
    for (let i = 0; i < 6; i++) {
      const reported = i % 2 === 0 ? report(code('P0420', 'powertrain')) : report(code('P0171', 'powertrain'));
      const expected = i === 0 ? [checkEngine('P0420')] : [checkEngine('P0171'), checkEngine('P0420')];
      expect(v.feed(reported)).toEqual(expected);
    }
    // Several reports in one evaluation count one by one.
    expect(v.feed(report(code('P0420', 'powertrain')), report(), report(code('P0420', 'powertrain')))).toEqual([
      checkEngine('P0420'),
    ]);
  });

  it('follows config.dtc.clearAfterReports', () => {
    const once = vehicle(effectiveHealthConfig({ dtc: { clearAfterReports: 1 } }));
    expect(once.feed(report(code('C0035', 'chassis')))).toEqual([
      alert('C0035', 'abs_warning', 'high', 'ABS warning: C0035'),
    ]);
    expect(once.feed(report())).toEqual([]);
    const thrice = vehicle(effectiveHealthConfig({ dtc: { clearAfterReports: 3 } }));
    expect(thrice.feed(report(code('C0035', 'chassis')), report(), report())).toEqual([
      alert('C0035', 'abs_warning', 'high', 'ABS warning: C0035'),
    ]);
    expect(thrice.feed(report())).toEqual([]);
  });

  it('escalates a code when its MIL comes on and keeps the severity until the code clears', () => {
    const v = vehicle();
    expect(v.feed(report(code('P0730', 'powertrain')))).toEqual([
      alert('P0730', 'transmission_fault', 'medium', 'Transmission fault: P0730'),
    ]);
    expect(v.feed(report(code('P0730', 'powertrain', true)))).toEqual([
      alert('P0730', 'transmission_fault', 'high', 'Transmission fault: P0730'),
    ]);
    expect(v.feed(report(code('P0730', 'powertrain', false)))).toEqual([
      alert('P0730', 'transmission_fault', 'high', 'Transmission fault: P0730'),
    ]);
    // Cleared, then back: a new episode starts at its own severity.
    expect(v.feed(report(), report())).toEqual([]);
    expect(v.feed(report(code('P0730', 'powertrain')))).toEqual([
      alert('P0730', 'transmission_fault', 'medium', 'Transmission fault: P0730'),
    ]);
  });

  it('keeps the type and severity a code first had when a later report names another system', () => {
    const v = vehicle();
    expect(v.feed(report(code('U0100', 'network')))).toEqual([checkEngine('U0100', 'low')]);
    expect(v.feed(report(code('U0100', 'chassis', true)))).toEqual([checkEngine('U0100', 'low')]);
    expect(v.feed(report(code('U0100', 'network', true)))).toEqual([checkEngine('U0100', 'medium')]);
  });

  it('an empty report is a report; a value that is not a list is not', () => {
    const v = vehicle();
    expect(v.feed(report())).toEqual([]);
    expect(v.feed(report(code('P0420', 'powertrain')))).toEqual([checkEngine('P0420')]);
    const odd: RuleSample[] = [null, 'P0420', { code: 'P0420' }, 42].map((value) => ({
      signal: 'dtcs',
      recordedAt: at(clock++),
      value,
      source: 'generic',
    }));
    expect(v.feed(...odd)).toEqual([checkEngine('P0420')]);
    // Entries without a string code are skipped; the report itself still counts.
    expect(v.feed(report({ code: null }, { code: 7 }), report({ code: '' }))).toEqual([]);
  });

  it('a sweep without samples keeps the active codes', () => {
    const v = vehicle();
    expect(v.feed(report(code('B0001', 'body')))).toEqual([
      alert('B0001', 'airbag_warning', 'high', 'Airbag warning: B0001'),
    ]);
    expect(v.feed()).toEqual([alert('B0001', 'airbag_warning', 'high', 'Airbag warning: B0001')]);
    expect(v.state.codes).toEqual({ B0001: { type: 'airbag_warning', severity: 'high', missedReports: 0 } });
  });

  it('bounds the state against a broken feed listing hundreds of codes', () => {
    const flood = Array.from({ length: 300 }, (_, i) => code(`P${String(1000 + i)}`, 'powertrain'));
    const v = vehicle();
    const alerts = v.feed(report(...flood));
    expect(alerts).toHaveLength(64);
    expect(alerts[0]).toEqual(checkEngine('P1000'));
    expect(alerts[63]).toEqual(checkEngine('P1063'));
    expect(Object.keys(v.state.codes)).toHaveLength(64);
  });
});

describe('diagnostic codes: check engine light without codes', () => {
  it('raises one mil alert while the lamp is on with no active code, and clears on a false sample', () => {
    const v = vehicle();
    expect(v.feed(lamp(true))).toEqual([milAlert]);
    expect(v.feed(lamp(true), lamp(true))).toEqual([milAlert]);
    expect(v.feed()).toEqual([milAlert]);
    expect(v.feed(lamp(false))).toEqual([]);
    expect(v.feed(lamp(true))).toEqual([milAlert]);
  });

  it('active codes take the place of the mil alert', () => {
    const v = vehicle();
    expect(v.feed(lamp(true), report(code('P0420', 'powertrain', true)))).toEqual([checkEngine('P0420')]);
    // The codes clear while the lamp still reads on: the lamp alone is reported again.
    expect(v.feed(report(), report())).toEqual([milAlert]);
    expect(v.feed(lamp(false))).toEqual([]);
  });

  it('a lamp off with an active code leaves the code alert', () => {
    const v = vehicle();
    expect(v.feed(report(code('P0171', 'powertrain', true)), lamp(false))).toEqual([checkEngine('P0171')]);
  });

  it('ignores non-boolean lamp values', () => {
    const v = vehicle();
    expect(v.feed(lamp('on'), lamp(1), lamp(null))).toEqual([]);
    expect(v.feed(lamp(true), lamp('off'), lamp(0))).toEqual([milAlert]);
  });
});
