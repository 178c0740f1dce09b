/**
 * Pricing (docs/pricing.md): list prices, graduated discounts at every boundary
 * (99/100/101, 999/1000/1001, 9,999/10,000/10,001), the rounding of fractional cents, the current
 * band and units to the next, and the month-end projection.
 */
import { describe, expect, it } from 'vitest';
import { priceProduct, projectRuns, roundMicrosToCents, type Product } from '../../../src/usage/pricing.js';

function priced(product: Product, tier: string, quantity: number) {
  const p = priceProduct(product, quantity ? [{ tier, quantity }] : []);
  return { gross: p.grossCents, discount: p.discountCents, net: p.netCents };
}

describe('list prices', () => {
  it.each([
    ['history_report', 'basic', 500],
    ['history_report', 'standard', 1000],
    ['history_report', 'comprehensive', 1500],
    ['history_report', 'lifetime', 2000],
    ['verification', 'basic', 50],
    ['verification', 'standard', 100],
    ['verification', 'premium', 200],
    ['monitoring', 'basic', 100],
    ['monitoring', 'standard', 250],
    ['monitoring', 'premium', 500],
  ] as const)('%s %s costs %i cents', (product, tier, cents) => {
    expect(priced(product, tier, 1)).toEqual({ gross: cents, discount: 0, net: cents });
  });

  it('refuses a tier with no price', () => {
    expect(() => priceProduct('verification', [{ tier: 'lifetime', quantity: 1 }])).toThrow(/no price/);
  });
});

describe('graduated discounts: reports 15 % from the 100th, 25 % from the 1,000th', () => {
  it.each([
    [99, 49_500, 0],
    [100, 50_000, 75],
    [101, 50_500, 150],
    [999, 499_500, 900 * 75],
    [1000, 500_000, 900 * 75 + 125],
    [1001, 500_500, 900 * 75 + 250],
    [10_000, 5_000_000, 900 * 75 + 9001 * 125],
  ])('%i basic reports', (quantity, gross, discount) => {
    expect(priced('history_report', 'basic', quantity)).toEqual({ gross, discount, net: gross - discount });
  });

  it('discounts the units past the boundary at their own tier price', () => {
    const p = priceProduct('history_report', [
      { tier: 'basic', quantity: 99 },
      { tier: 'lifetime', quantity: 2 },
    ]);
    expect(p.discountCents).toBe(2 * 300);
    expect(p.lines.map((l) => [l.tier, l.quantity])).toEqual([
      ['basic', 99],
      ['standard', 0],
      ['comprehensive', 0],
      ['lifetime', 2],
    ]);
  });
});

describe('graduated discounts: verifications 10 % from the 1,000th, 20 % from the 10,000th', () => {
  it.each([
    [99, 4950, 0],
    [100, 5000, 0],
    [999, 49_950, 0],
    [1000, 50_000, 5],
    [1001, 50_050, 10],
    [9999, 499_950, 9000 * 5],
    [10_000, 500_000, 9000 * 5 + 10],
    [10_001, 500_050, 9000 * 5 + 20],
  ])('%i basic verifications', (quantity, gross, discount) => {
    expect(priced('verification', 'basic', quantity)).toEqual({ gross, discount, net: gross - discount });
  });
});

describe('graduated discounts: monitored vehicles 15 % from the 100th, 25 % from the 1,000th, custom from the 10,000th', () => {
  it.each([
    // 15 % of $2.50 is 37.5¢: exact until the product's discount is rounded once, half up.
    [99, 24_750, 0],
    [100, 25_000, 38],
    [101, 25_250, 75],
    [999, 249_750, 33_750],
    [1000, 250_000, 33_813],
    [1001, 250_250, 33_875],
  ])('%i standard vehicles', (quantity, gross, discount) => {
    expect(priced('monitoring', 'standard', quantity)).toEqual({ gross, discount, net: gross - discount });
  });

  it.each([
    [9999, false],
    [10_000, true],
    [10_001, true],
  ])('%i vehicles: custom_pricing %s', (quantity, custom) => {
    expect(priceProduct('monitoring', [{ tier: 'basic', quantity }]).customPricing).toBe(custom);
  });
});

describe('the total never drops when one more unit is billed', () => {
  it.each(['history_report', 'verification', 'monitoring'] as const)('%s, 1 to 12,000 units', (product) => {
    const tier = product === 'history_report' ? 'basic' : 'standard';
    let previous = -1;
    for (let n = 1; n <= 12_000; n += n < 1100 || n > 9900 ? 1 : 97) {
      const net = priced(product, tier, n).net;
      expect(net).toBeGreaterThan(previous);
      previous = net;
    }
  });
});

describe('rounding', () => {
  it('rounds micro-dollars to cents half up', () => {
    expect(roundMicrosToCents(374_999)).toBe(37);
    expect(roundMicrosToCents(375_000)).toBe(38);
    expect(roundMicrosToCents(0)).toBe(0);
  });
});

describe('current band and units to the next', () => {
  it.each([
    [0, 0, 100, 100],
    [98, 0, 100, 2],
    [99, 0, 100, 1],
    [100, 15, 1000, 900],
    [999, 15, 1000, 1],
    [1000, 25, null, null],
  ])('%i reports: %i %% off, next from %s in %s units', (quantity, percentOff, nextFrom, unitsToGo) => {
    const p = priceProduct('history_report', quantity ? [{ tier: 'basic', quantity }] : []);
    expect(p.currentBand.percentOff).toBe(percentOff);
    expect(p.nextBand?.fromUnit ?? null).toBe(nextFrom);
    expect(p.nextBand?.unitsToGo ?? null).toBe(unitsToGo);
  });

  it('monitoring past 1,000 vehicles points at custom pricing', () => {
    const p = priceProduct('monitoring', [{ tier: 'basic', quantity: 1500 }]);
    expect(p.nextBand).toMatchObject({ fromUnit: 10_000, customPricing: true, unitsToGo: 8500 });
  });
});

describe('projection', () => {
  it('extends each tier at the pace so far', () => {
    expect(
      projectRuns(
        [
          { tier: 'basic', quantity: 10 },
          { tier: 'premium', quantity: 3 },
        ],
        0.25,
      ),
    ).toEqual([
      { tier: 'basic', quantity: 10 },
      { tier: 'premium', quantity: 3 },
      { tier: 'basic', quantity: 30 },
      { tier: 'premium', quantity: 9 },
    ]);
  });

  it('is the actuals once the month is over', () => {
    expect(projectRuns([{ tier: 'basic', quantity: 10 }], 1)).toEqual([{ tier: 'basic', quantity: 10 }]);
  });

  it('prices a projection across a boundary with the discount', () => {
    const p = priceProduct('history_report', projectRuns([{ tier: 'basic', quantity: 60 }], 0.5));
    expect(p.quantity).toBe(120);
    expect(p.discountCents).toBe(21 * 75);
  });
});
