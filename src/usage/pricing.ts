/**
 * Prices of the paid interfaces (docs/pricing.md) as one table, and the pure function
 * that prices a month of one product. Money is integer micro-dollars (1 USD = 1,000,000) until it
 * is shown: every list price is whole cents and every discount a whole percent, so each unit's
 * discounted price is exact in micro-dollars and sums never drift.
 *
 * Terminology:
 * - unit: one billed report, one billed verification, or one monitored vehicle-month.
 * - band: a discount that applies from the `fromUnit`-th unit of the month on (graduated, as
 *   Stripe's `tiers_mode: graduated`): the 99th report is full price, the 100th is 15 % off.
 * - run: consecutive units of one tier, in the order they were billed.
 *
 * Rounding (docs/pricing.md): a product's gross and discount are each computed exactly, then
 * rounded once to the cent, half up; net = gross − discount, so the shown figures add up. Only
 * discounts can have fractional cents (15 % of $2.50 is 37.5¢).
 */
import type { Run } from '../db/usage.js';

export const microsPerDollar = 1_000_000;
const microsPerCent = 10_000;

export const products = ['history_report', 'verification', 'monitoring'] as const;
export type Product = (typeof products)[number];

export interface DiscountBand {
  /** 1-based ordinal of the month's first unit the band applies to. */
  fromUnit: number;
  percentOff: number;
  /** From here the price is negotiated (monitoring from the 10,000th vehicle); percentOff is what is shown meanwhile. */
  customPricing: boolean;
}

export interface ProductPricing {
  /** List price of one unit of each tier (or level), in cents, in the order the spec lists them. */
  unitPriceCents: Readonly<Record<string, number>>;
  /** Ascending by fromUnit; the first starts at unit 1 with no discount. */
  bands: readonly DiscountBand[];
}

const band = (fromUnit: number, percentOff: number, customPricing = false): DiscountBand => ({
  fromUnit,
  percentOff,
  customPricing,
});

export const pricing: Readonly<Record<Product, ProductPricing>> = {
  history_report: {
    unitPriceCents: { basic: 500, standard: 1000, comprehensive: 1500, lifetime: 2000 },
    bands: [band(1, 0), band(100, 15), band(1000, 25)],
  },
  verification: {
    unitPriceCents: { basic: 50, standard: 100, premium: 200 },
    bands: [band(1, 0), band(1000, 10), band(10_000, 20)],
  },
  monitoring: {
    unitPriceCents: { basic: 100, standard: 250, premium: 500 },
    bands: [band(1, 0), band(100, 15), band(1000, 25), band(10_000, 25, true)],
  },
};

export function unitPriceMicros(product: Product, tier: string): number {
  const cents = pricing[product].unitPriceCents[tier];
  if (cents === undefined) throw new Error(`no price for ${product} tier ${tier}`);
  return cents * microsPerCent;
}

export interface PricedLine {
  tier: string;
  quantity: number;
  unitPriceMicros: number;
  grossMicros: number;
}

export interface PricedProduct {
  product: Product;
  quantity: number;
  /** Exact, before rounding. */
  grossMicros: number;
  discountMicros: number;
  /** Rounded to the cent as shown: gross and discount half up, net their difference. */
  grossCents: number;
  discountCents: number;
  netCents: number;
  /** Every tier of the product in table order, zero quantities included. */
  lines: PricedLine[];
  /** The band of the month's latest unit (the first band when there is none). */
  currentBand: DiscountBand;
  /** The next band and how many more units until its first unit is billed; null past the last. */
  nextBand: (DiscountBand & { unitsToGo: number }) | null;
  customPricing: boolean;
}

/** Rounds non-negative micro-dollars to cents, half up. */
export function roundMicrosToCents(micros: number): number {
  return Math.floor((micros + microsPerCent / 2) / microsPerCent);
}

export function bandOfUnit(bands: readonly DiscountBand[], ordinal: number): DiscountBand {
  let found = bands[0]!;
  for (const b of bands) if (ordinal >= b.fromUnit) found = b;
  return found;
}

/**
 * Prices a month of one product from its units in billing order (runs). Each unit gets the
 * discount of the band its ordinal falls in, so crossing a boundary never lowers the total.
 */
export function priceProduct(product: Product, runs: readonly Run[]): PricedProduct {
  const { unitPriceCents, bands } = pricing[product];
  const lines = new Map<string, PricedLine>(
    Object.keys(unitPriceCents).map((tier) => [
      tier,
      { tier, quantity: 0, unitPriceMicros: unitPriceMicros(product, tier), grossMicros: 0 },
    ]),
  );
  let ordinal = 0;
  let discountMicros = 0;
  for (const run of runs) {
    const line = lines.get(run.tier);
    if (!line) throw new Error(`no price for ${product} tier ${run.tier}`);
    line.quantity += run.quantity;
    line.grossMicros += run.quantity * line.unitPriceMicros;
    // Split the run at each band boundary it crosses: whole stretches at one percentage.
    let remaining = run.quantity;
    while (remaining > 0) {
      const first = ordinal + 1;
      const current = bandOfUnit(bands, first);
      const next = bands.find((b) => b.fromUnit > first);
      const stretch = next ? Math.min(remaining, next.fromUnit - first) : remaining;
      // price in micro-dollars × whole percent / 100 is exact: prices are whole cents (10,000 µ$).
      discountMicros += (stretch * line.unitPriceMicros * current.percentOff) / 100;
      ordinal += stretch;
      remaining -= stretch;
    }
  }
  const grossMicros = [...lines.values()].reduce((sum, l) => sum + l.grossMicros, 0);
  const grossCents = roundMicrosToCents(grossMicros);
  const discountCents = roundMicrosToCents(discountMicros);
  const currentBand = bandOfUnit(bands, Math.max(ordinal, 1));
  const next = bands.find((b) => b.fromUnit > Math.max(ordinal, 1));
  return {
    product,
    quantity: ordinal,
    grossMicros,
    discountMicros,
    grossCents,
    discountCents,
    netCents: grossCents - discountCents,
    lines: [...lines.values()],
    currentBand,
    nextBand: next ? { ...next, unitsToGo: next.fromUnit - ordinal } : null,
    customPricing: currentBand.customPricing,
  };
}

/**
 * The month-end forecast: today's units plus, per tier, what the same pace adds over the rest of
 * the month (linear in elapsed time), appended in tier order and priced like real units.
 * `elapsed` is the fraction of the month gone, in (0, 1]; 1 (a past month) forecasts the actuals.
 */
export function projectRuns(runs: readonly Run[], elapsed: number): Run[] {
  if (elapsed >= 1 || elapsed <= 0) return [...runs];
  const byTier = new Map<string, number>();
  for (const run of runs) byTier.set(run.tier, (byTier.get(run.tier) ?? 0) + run.quantity);
  const extra: Run[] = [];
  for (const [tier, quantity] of byTier) {
    const more = Math.round(quantity / elapsed) - quantity;
    if (more > 0) extra.push({ tier, quantity: more });
  }
  return [...runs, ...extra];
}

/** Cents as the API shows money: USD, a number with at most two decimals. */
export function centsToDollars(cents: number): number {
  return cents / 100;
}

export function microsToDollars(micros: number): number {
  return centsToDollars(roundMicrosToCents(micros));
}
