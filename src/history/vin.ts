/**
 * VIN validation (ISO 3779 / 49 CFR 565): a pure function, see research/history-verify.md.
 * Interface agreed for issue 10; the rules land with the history report work.
 */
export type VinRule = 'length' | 'alphabet' | 'check_digit' | 'model_year';

export type VinCheck =
  { ok: true; vin: string; modelYear: number | null } | { ok: false; rule: VinRule; message: string };

export function checkVin(input: string): VinCheck {
  throw new Error(`checkVin(${input.length} chars): not built yet (issue 10)`);
}
