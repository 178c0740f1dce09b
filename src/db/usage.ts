/**
 * Statements of the usage ledger (migration 0016, docs/pricing.md): one row per billed report or
 * verification, read back per UTC month in billing order for pricing and per day for the chart.
 */
import type { Queryable } from './pool.js';

export type MeteredProduct = 'history_report' | 'verification';

export interface UsageEntry {
  companyId: string;
  product: MeteredProduct;
  tier: string;
  unitPriceMicros: number;
  /** The request id: unique per request, so one request is billed once. */
  requestKey: string;
  idempotencyKey: string | null;
  /** First day of the UTC month, YYYY-MM-01. */
  month: string;
  billedAt: Date;
}

export async function insertUsage(q: Queryable, e: UsageEntry): Promise<void> {
  await q.query({
    name: 'insert-usage',
    text: `INSERT INTO usage_ledger (company_id, product, tier, unit_price_micros, request_key, idempotency_key, month, billed_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (company_id, product, request_key) DO NOTHING`,
    values: [e.companyId, e.product, e.tier, e.unitPriceMicros, e.requestKey, e.idempotencyKey, e.month, e.billedAt],
  });
}

/** Takes a billed request back (a PDF whose stream failed before the caller had it). */
export async function deleteUsage(
  q: Queryable,
  companyId: string,
  product: MeteredProduct,
  requestKey: string,
): Promise<void> {
  await q.query(`DELETE FROM usage_ledger WHERE company_id = $1 AND product = $2 AND request_key = $3`, [
    companyId,
    product,
    requestKey,
  ]);
}

/** Consecutive units of one tier, in billing order (priced by src/usage/pricing.ts). */
export interface Run {
  tier: string;
  quantity: number;
}

/**
 * The month's units of one product in billing order, as runs of one tier (gaps and islands: a
 * unit's overall rank minus its rank within its tier is constant along a run).
 */
export async function usageRunsOfMonth(
  q: Queryable,
  companyId: string,
  product: MeteredProduct,
  month: string,
): Promise<Run[]> {
  const result = await q.query<Run>({
    name: 'usage-runs-of-month',
    text: `SELECT tier, count(*)::int AS quantity FROM (
             SELECT tier,
                    row_number() OVER (ORDER BY billed_at, id) AS n,
                    row_number() OVER (ORDER BY billed_at, id) - row_number() OVER (PARTITION BY tier ORDER BY billed_at, id) AS island
             FROM usage_ledger WHERE company_id = $1 AND product = $2 AND month = $3
           ) ranked
           GROUP BY tier, island ORDER BY min(n)`,
    values: [companyId, product, month],
  });
  return result.rows;
}

export interface DailyUsage {
  /** YYYY-MM-DD, UTC. */
  day: string;
  product: MeteredProduct;
  quantity: number;
}

export async function dailyUsageOfMonth(q: Queryable, companyId: string, month: string): Promise<DailyUsage[]> {
  const result = await q.query<DailyUsage>({
    name: 'daily-usage-of-month',
    text: `SELECT to_char(billed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, product, count(*)::int AS quantity
           FROM usage_ledger WHERE company_id = $1 AND month = $2
           GROUP BY 1, 2 ORDER BY 1, 2`,
    values: [companyId, month],
  });
  return result.rows;
}
