/**
 * The health rules, in evaluation order. Listed explicitly: adding, removing or reordering a rule
 * is a reviewed change here. The link rule (src/health/rules/link-broken.ts) runs before all of
 * them because they read the trusted odometer it settles.
 */
import { batteryVoltageRule } from './rules/battery-voltage.js';
import { brakeLiningRule } from './rules/brake-lining.js';
import { coolantTemperatureRule } from './rules/coolant-temperature.js';
import { diagnosticCodesRule } from './rules/diagnostic-codes.js';
import { fuelLevelRule } from './rules/fuel-level.js';
import { maintenanceDueRule } from './rules/maintenance-due.js';
import { tirePressureRule } from './rules/tire-pressure.js';
import type { Rule } from './types.js';

// Each rule keeps its own state type; the engine only passes that state back to the same rule.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const healthRules: ReadonlyArray<Rule<any>> = [
  batteryVoltageRule,
  coolantTemperatureRule,
  tirePressureRule,
  fuelLevelRule,
  diagnosticCodesRule,
  brakeLiningRule,
  maintenanceDueRule,
];
