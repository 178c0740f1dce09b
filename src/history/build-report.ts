/**
 * Loads every record held for a VIN inside the tier's data range and assembles the report.
 * Interface agreed for issue 10; the loaders and assembler land with the history report work.
 */
import type { Queryable } from '../db/pool.js';
import type { HistoryReport, ReportTier } from './types.js';

export interface HistoryReportRequest {
  vin: string;
  tier: ReportTier;
  reportId: string;
  now: Date;
}

/** null when no company's vehicle has the VIN. */
export async function buildHistoryReport(q: Queryable, request: HistoryReportRequest): Promise<HistoryReport | null> {
  void q;
  throw new Error(`buildHistoryReport(${request.tier}): not built yet (issue 10)`);
}
