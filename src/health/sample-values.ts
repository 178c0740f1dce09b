/** Sample values as the rules read them: finite numbers only, anything else is no reading. */

export function finiteValue(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/** Percentages, pressures, odometers: a negative value is no reading. */
export function nonNegativeValue(value: unknown): number | null {
  const n = finiteValue(value);
  return n !== null && n >= 0 ? n : null;
}
