import { describe, expect, it } from 'vitest';
import { checkDigitOf, checkVin, modelYearOf } from '../../../src/domain/vin.js';

describe('checkVin', () => {
  it.each([
    ['1M8GDM9AXKP042788', 1989],
    ['1HGCM82633A004352', 2003],
    ['KM8K2CAB4PU001140', 2023],
    ['11111111111111111', 2001],
    ['1G4AH59H45G118341', 2005],
  ])('accepts the known vector %s (model year %i)', (vin, year) => {
    expect(checkVin(vin)).toEqual({ ok: true, vin, modelYear: year });
  });

  it('computes the CFR example: 1G4AH59H45G118341 sums to 411, remainder 4', () => {
    expect(checkDigitOf('1G4AH59H45G118341')).toBe('4');
    expect(checkDigitOf('1M8GDM9AXKP042788')).toBe('X');
  });

  it('upper-cases and trims the input', () => {
    expect(checkVin(' 1hgcm82633a004352 ')).toMatchObject({ ok: true, vin: '1HGCM82633A004352' });
  });

  it('names the length rule', () => {
    expect(checkVin('1HGCM82633A00435')).toMatchObject({
      ok: false,
      rule: 'length',
      message: expect.stringContaining('16'),
    });
    expect(checkVin('1HGCM82633A0043521')).toMatchObject({ ok: false, rule: 'length' });
    expect(checkVin('')).toMatchObject({ ok: false, rule: 'length' });
  });

  it.each(['I', 'O', 'Q', '-', 'É'])('names the alphabet rule for %s', (c) => {
    const check = checkVin(`1HGCM82633A00435${c}`);
    expect(check).toMatchObject({ ok: false, rule: 'alphabet', message: expect.stringContaining(`"${c}"`) });
  });

  it('names the check digit rule: corgi README example 1HGCM82633A123456 has 3 where 7 belongs', () => {
    expect(checkVin('1HGCM82633A123456')).toEqual({
      ok: false,
      rule: 'check_digit',
      message: 'the check digit (position 9) is "3" but the other characters give "7"',
    });
  });

  it.each(['U', 'Z', '0'])('names the model_year rule when position 10 is %s', (code) => {
    const vin = `1HGCM8263${code}A004352`;
    expect(checkVin(vin)).toMatchObject({ ok: false, rule: 'model_year' });
  });
});

describe('modelYearOf', () => {
  const vinWith = (position7: string, code: string) => `1HGCM8${position7}63${code}A004352`;

  it('chooses the 30-year cycle by position 7: digit 1980–2009, letter 2010–2039', () => {
    expect(modelYearOf(vinWith('2', '3'))).toBe(2003);
    expect(modelYearOf(vinWith('2', 'A'))).toBe(1980);
    expect(modelYearOf(vinWith('2', 'Y'))).toBe(2000);
    expect(modelYearOf(vinWith('2', '9'))).toBe(2009);
    expect(modelYearOf(vinWith('A', 'A'))).toBe(2010);
    expect(modelYearOf(vinWith('A', 'T'))).toBe(2026);
    expect(modelYearOf(vinWith('A', 'Y'))).toBe(2030);
    expect(modelYearOf(vinWith('A', '9'))).toBe(2039);
  });
});
