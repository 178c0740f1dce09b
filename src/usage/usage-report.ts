/**
 * The usage of one company in one UTC month (GET /v1/usage, docs/pricing.md; the console's Usage page):
 * per product the quantity, gross, discount and net with one line per tier, plus (additive) the
 * current discount band, units to the next, a month-end projection, and the daily counts of the
 * metered calls for a chart. Money is USD rounded to cents (src/usage/pricing.ts).
 */
import { monitoredVehiclesOfMonth } from '../db/monitoring-metering.js';
import type { Queryable } from '../db/pool.js';
import { dailyUsageOfMonth, usageRunsOfMonth } from '../db/usage.js';
import { daysOfMonthThrough, elapsedFraction, monthFirstDay } from './months.js';
import {
  centsToDollars,
  microsToDollars,
  priceProduct,
  pricing,
  projectRuns,
  type DiscountBand,
  type PricedProduct,
  type Product,
} from './pricing.js';
import { type Run } from '../db/usage.js';

export interface DiscountTier {
  percent_off: number;
  /** 1-based ordinal of the month's unit the band starts at. */
  from_unit: number;
  custom_pricing: boolean;
}

export interface ProductUsage {
  product: Product;
  quantity: number;
  gross: number;
  discount: number;
  net: number;
  lines: Array<{ tier: string; quantity: number; unit_price: number; gross: number }>;
  discount_tier: DiscountTier;
  next_discount_tier: (DiscountTier & { units_to_go: number }) | null;
  /** Monitoring from the 10,000th vehicle: the price is negotiated; the figures use the last published discount. */
  custom_pricing: boolean;
  projected: { quantity: number; net: number };
}

export interface UsageReport {
  month: string;
  currency: 'USD';
  products: ProductUsage[];
  total: number;
  projected_total: number;
  daily: Array<{ date: string; history_report: number; verification: number }>;
}

function tierOf(band: DiscountBand): DiscountTier {
  return { percent_off: band.percentOff, from_unit: band.fromUnit, custom_pricing: band.customPricing };
}

function present(priced: PricedProduct, projected: PricedProduct): ProductUsage {
  return {
    product: priced.product,
    quantity: priced.quantity,
    gross: centsToDollars(priced.grossCents),
    discount: centsToDollars(priced.discountCents),
    net: centsToDollars(priced.netCents),
    lines: priced.lines.map((l) => ({
      tier: l.tier,
      quantity: l.quantity,
      unit_price: microsToDollars(l.unitPriceMicros),
      gross: microsToDollars(l.grossMicros),
    })),
    discount_tier: tierOf(priced.currentBand),
    next_discount_tier: priced.nextBand ? { ...tierOf(priced.nextBand), units_to_go: priced.nextBand.unitsToGo } : null,
    custom_pricing: priced.customPricing,
    projected: { quantity: projected.quantity, net: centsToDollars(projected.netCents) },
  };
}

/**
 * Monitored vehicles are billed together for the month, so they have no billing order: they are
 * counted cheapest tier first, which puts the discount of the later bands on the dearer vehicles.
 */
function monitoringRuns(vehicles: ReadonlyArray<{ tier: string }>): Run[] {
  const prices = pricing.monitoring.unitPriceCents;
  const tiers = Object.keys(prices).sort((a, b) => prices[a]! - prices[b]!);
  return tiers
    .map((tier) => ({ tier, quantity: vehicles.filter((v) => v.tier === tier).length }))
    .filter((run) => run.quantity > 0);
}

/** `month` is YYYY-MM; `now` places the projection (a month that has ended projects its actuals). */
export async function loadUsageReport(q: Queryable, companyId: string, month: string, now: Date): Promise<UsageReport> {
  const firstDay = monthFirstDay(month);
  const [reports, verifications, vehicles, daily] = await Promise.all([
    usageRunsOfMonth(q, companyId, 'history_report', firstDay),
    usageRunsOfMonth(q, companyId, 'verification', firstDay),
    monitoredVehiclesOfMonth(q, companyId, month),
    dailyUsageOfMonth(q, companyId, firstDay),
  ]);
  const elapsed = elapsedFraction(month, now);
  const monitored = monitoringRuns(vehicles);
  const priced: Array<[PricedProduct, PricedProduct]> = [
    [priceProduct('history_report', reports), priceProduct('history_report', projectRuns(reports, elapsed))],
    [priceProduct('verification', verifications), priceProduct('verification', projectRuns(verifications, elapsed))],
    // A vehicle monitored this month is billed for all of it: the month's count is already final.
    [priceProduct('monitoring', monitored), priceProduct('monitoring', monitored)],
  ];
  const counts = new Map(daily.map((d) => [`${d.day} ${d.product}`, d.quantity]));
  return {
    month,
    currency: 'USD',
    products: priced.map(([actual, projected]) => present(actual, projected)),
    total: centsToDollars(priced.reduce((sum, [actual]) => sum + actual.netCents, 0)),
    projected_total: centsToDollars(priced.reduce((sum, [, projected]) => sum + projected.netCents, 0)),
    daily: daysOfMonthThrough(month, now).map((date) => ({
      date,
      history_report: counts.get(`${date} history_report`) ?? 0,
      verification: counts.get(`${date} verification`) ?? 0,
    })),
  };
}
