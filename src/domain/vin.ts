/**
 * VIN validation (49 CFR 565; docs/history-report.md "VIN rules"): a pure function. The rules run in
 * order and the first that fails is named, so a 400 tells the caller what to fix:
 * 1. length: exactly 17 characters (after trimming and upper-casing);
 * 2. alphabet: digits and letters except I, O and Q;
 * 3. model_year: position 10 is a model-year code (A–Y without I, O, Q, U, Z, or 1–9);
 * 4. check_digit: position 9 equals the weighted sum of the transliterated characters mod 11
 *    (10 is written X).
 * The model-year code comes before the check digit: a VIN with an impossible year code is wrong
 * whatever its check digit says, and the message is more useful.
 */
export type VinRule = 'length' | 'alphabet' | 'check_digit' | 'model_year';

export type VinCheck =
  { ok: true; vin: string; modelYear: number | null } | { ok: false; rule: VinRule; message: string };

export const vinLength = 17;

/** 49 CFR 565.15 Table IV: the value of each letter; digits keep their own. */
// prettier-ignore
const transliteration: Readonly<Record<string, number>> = {
  A: 1, B: 2, C: 3, D: 4, E: 5, F: 6, G: 7, H: 8,
  J: 1, K: 2, L: 3, M: 4, N: 5, P: 7, R: 9,
  S: 2, T: 3, U: 4, V: 5, W: 6, X: 7, Y: 8, Z: 9,
};

/** 49 CFR 565.15 Table V: the weight of each position, 1 to 17 (the check digit's own is 0). */
const weights = [8, 7, 6, 5, 4, 3, 2, 10, 0, 9, 8, 7, 6, 5, 4, 3, 2] as const;

/** 49 CFR 565.15 Table VII: 30 codes, 1980 (A) to 2009 (9), repeating every 30 years. */
const yearCodes = 'ABCDEFGHJKLMNPRSTVWXY123456789';

const vinAlphabet = /^[A-HJ-NPR-Z0-9]+$/;

export function checkDigitOf(vin: string): string {
  let sum = 0;
  for (let i = 0; i < vinLength; i++) {
    const c = vin[i]!;
    const value = c >= '0' && c <= '9' ? Number(c) : transliteration[c]!;
    sum += value * weights[i]!;
  }
  const remainder = sum % 11;
  return remainder === 10 ? 'X' : String(remainder);
}

/**
 * The model year of position 10. The cycle (1980–2009 or 2010–2039) is chosen by position 7 as
 * the Note to Table VII says for cars and light trucks: a digit there means the earlier cycle, a
 * letter the later. The rule is undefined for heavy trucks, trailers and motorcycles, so it is a
 * best reading, not a decode.
 */
export function modelYearOf(vin: string): number | null {
  const index = yearCodes.indexOf(vin[9]!);
  if (index < 0) return null;
  const earlier = /[0-9]/.test(vin[6]!);
  return 1980 + index + (earlier ? 0 : 30);
}

export function checkVin(input: string): VinCheck {
  const vin = input.trim().toUpperCase();
  if (vin.length !== vinLength) {
    return { ok: false, rule: 'length', message: `a VIN has 17 characters; this one has ${vin.length}` };
  }
  if (!vinAlphabet.test(vin)) {
    const bad = [...vin].find((c) => !vinAlphabet.test(c))!;
    return {
      ok: false,
      rule: 'alphabet',
      message: `"${bad}" cannot appear in a VIN (digits and letters except I, O and Q)`,
    };
  }
  const modelYear = modelYearOf(vin);
  if (modelYear === null) {
    return {
      ok: false,
      rule: 'model_year',
      message: `position 10 ("${vin[9]}") is not a model-year code (A–Y without I, O, Q, U, Z, or 1–9)`,
    };
  }
  const expected = checkDigitOf(vin);
  if (vin[8] !== expected) {
    return {
      ok: false,
      rule: 'check_digit',
      message: `the check digit (position 9) is "${vin[8]}" but the other characters give "${expected}"`,
    };
  }
  return { ok: true, vin, modelYear };
}
