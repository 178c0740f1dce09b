import { describe, expect, it } from 'vitest';
import type { HealthConfig } from '../../../src/domain/health-config.js';
import { coolantTemperatureRule } from '../../../src/health/rules/coolant-temperature.js';
import type { ActiveAlert } from '../../../src/domain/health.js';
import type { RuleSample } from '../../../src/domain/sample.js';
import { ruleVehicle, sample } from '../../helpers/rule-harness.js';

const temp = (seconds: number, value: unknown) => sample('coolant_temp_c', seconds, value);
const engine = (seconds: number, value: unknown) => sample('engine_state', seconds, value);

function coolant(severity: ActiveAlert['severity'], celsius: number): ActiveAlert {
  return {
    key: 'coolant',
    severity,
    type: 'coolant_temperature_high',
    display_name: `Coolant temperature high: ${celsius} °C`,
    due_date: null,
    due_miles_remaining: null,
  };
}

const vehicle = (config?: HealthConfig) => ruleVehicle(coolantTemperatureRule, config);

describe('coolant temperature', () => {
  it('raises high at 105 °C held for 60 s while running, not at 59 s; 104.9 °C never raises', () => {
    const v = vehicle();
    expect(v.feed([engine(0, 'on'), temp(0, 105)], 59)).toEqual([]);
    expect(v.feed([temp(60, 105)], 60)).toEqual([coolant('high', 105)]);
    const below = vehicle();
    expect(below.feed([engine(0, 'on'), temp(0, 104.9), temp(3000, 104.9)], 6000)).toEqual([]);
  });

  it('raises critical at once at 112 °C; 111.9 °C is only high after confirmation', () => {
    const v = vehicle();
    expect(v.feed([engine(0, 'on'), temp(10, 112)], 10)).toEqual([coolant('critical', 112)]);
    const under = vehicle();
    expect(under.feed([engine(0, 'on'), temp(10, 111.9)], 10)).toEqual([]);
    expect(under.feed([], 70)).toEqual([coolant('high', 112)]);
  });

  it('escalates high to critical within the episode and does not drop back', () => {
    const v = vehicle();
    // The confirmation completes at 60 s with the value that held until then.
    expect(v.feed([engine(0, 'on'), temp(0, 106), temp(60, 107)], 60)).toEqual([coolant('high', 106)]);
    expect(v.feed([temp(90, 113)], 90)).toEqual([coolant('critical', 113)]);
    expect(v.feed([temp(120, 106), temp(400, 104)], 400)).toEqual([coolant('critical', 113)]);
  });

  it('holds one alert while hovering around 105 °C and clears only below 100 °C for 60 s', () => {
    const v = vehicle();
    expect(v.feed([engine(0, 'on'), temp(0, 106), temp(60, 106)], 60)).toEqual([coolant('high', 106)]);
    const hovering: RuleSample[] = [];
    for (let s = 90; s <= 900; s += 30) hovering.push(temp(s, s % 60 === 0 ? 104 : 106));
    expect(v.feed(hovering, 900)).toEqual([coolant('high', 106)]);
    // Exactly 100 °C is not below high − margin.
    expect(v.feed([temp(930, 100), temp(1500, 100)], 1500)).toEqual([coolant('high', 106)]);
    expect(v.feed([temp(1530, 99.9)], 1589)).toEqual([coolant('high', 106)]);
    expect(v.feed([], 1590)).toEqual([]);
  });

  it('an interrupted cool-down restarts the clearing time', () => {
    const v = vehicle();
    expect(v.feed([engine(0, 'on'), temp(0, 108), temp(60, 108)], 60)).toEqual([coolant('high', 108)]);
    expect(v.feed([temp(100, 95), temp(150, 101), temp(170, 95)], 229)).toEqual([coolant('high', 108)]);
    expect(v.feed([], 230)).toEqual([]);
  });

  it('flapping readings around 105 °C before any alert never confirm one', () => {
    const v = vehicle();
    const samples: RuleSample[] = [engine(0, 'on')];
    for (let s = 0; s <= 1200; s += 30) samples.push(temp(s, s % 60 === 0 ? 106 : 104));
    expect(v.feed(samples, 1229)).toEqual([]);
  });

  it('re-arms after clearing and raises a second episode', () => {
    const v = vehicle();
    expect(v.feed([engine(0, 'on'), temp(0, 107), temp(60, 107)], 60)).toEqual([coolant('high', 107)]);
    expect(v.feed([temp(100, 90), temp(160, 90)], 160)).toEqual([]);
    expect(v.feed([temp(200, 109)], 259)).toEqual([]);
    expect(v.feed([temp(260, 110)], 260)).toEqual([coolant('high', 109)]);
  });

  it('ignores hot readings with the engine off (heat soak), but a cool reading with the engine off clears', () => {
    const v = vehicle();
    expect(v.feed([engine(0, 'off'), temp(0, 115), temp(600, 110)], 600)).toEqual([]);
    expect(v.feed([engine(700, 'on'), temp(700, 106), temp(760, 106)], 760)).toEqual([coolant('high', 106)]);
    expect(v.feed([engine(800, 'off'), temp(800, 95)], 859)).toEqual([coolant('high', 106)]);
    expect(v.feed([], 860)).toEqual([]);
  });

  it('an engine stop voids the confirmation; after restart a new reading starts it again', () => {
    const v = vehicle();
    expect(v.feed([engine(0, 'on'), temp(0, 106), engine(30, 'off'), engine(40, 'idle')], 500)).toEqual([]);
    expect(v.feed([temp(50, 106)], 109)).toEqual([]);
    expect(v.feed([], 110)).toEqual([coolant('high', 106)]);
  });

  it('a sweep without samples completes the confirmation while the last reading still shows it', () => {
    const v = vehicle();
    expect(v.feed([engine(0, 'on'), temp(0, 106)], 10)).toEqual([]);
    expect(v.feed([], 60)).toEqual([coolant('high', 106)]);
    expect(v.feed([], 7200)).toEqual([coolant('high', 106)]);
    const cooled = vehicle();
    expect(cooled.feed([engine(0, 'on'), temp(0, 106), temp(30, 90)], 30)).toEqual([]);
    expect(cooled.feed([], 7200)).toEqual([]);
  });

  it('counts an unknown engine state as running', () => {
    const v = vehicle();
    expect(v.feed([temp(0, 112)], 0)).toEqual([coolant('critical', 112)]);
    expect(v.state.running).toBeNull();
  });

  it('ignores non-numeric values and unknown engine states; below-zero readings are valid', () => {
    const v = vehicle();
    expect(
      v.feed(
        [
          engine(0, 'on'),
          temp(0, 106),
          temp(20, 'hot'),
          temp(30, null),
          temp(40, Number.POSITIVE_INFINITY),
          engine(45, 'stalled'),
        ],
        59,
      ),
    ).toEqual([]);
    expect(v.feed([], 60)).toEqual([coolant('high', 106)]);
    expect(v.feed([temp(100, -12), temp(160, -12)], 160)).toEqual([]);
    expect(v.state.lastCelsius).toBe(-12);
  });
});
