/** Ingest inbox rows as the operator API shows them. */
import type { InboxRowDetail, ParkedInboxRow } from '../db/inbox.js';

export function presentParkedInboxRow(row: ParkedInboxRow) {
  return {
    inbox_id: row.id,
    company_id: row.companyId,
    connection_id: row.connectionId,
    provider: row.provider,
    received_at: row.receivedAt.toISOString(),
    parked_at: row.parkedAt.toISOString(),
    failed_attempts: row.failedAttempts,
    error: row.error,
    payload_bytes: row.payloadBytes,
  };
}

export function presentInboxRow(row: InboxRowDetail) {
  return {
    inbox_id: row.id,
    company_id: row.companyId,
    connection_id: row.connectionId,
    provider: row.provider,
    state: row.parkedAt ? ('parked' as const) : row.processedAt ? ('processed' as const) : ('pending' as const),
    content_type: row.contentType,
    received_at: row.receivedAt.toISOString(),
    processed_at: row.processedAt?.toISOString() ?? null,
    parked_at: row.parkedAt?.toISOString() ?? null,
    failed_attempts: row.failedAttempts,
    error: row.error,
    samples_count: row.samplesCount,
    skipped_count: row.skippedCount,
    unmapped_count: row.unmappedCount,
    payload_bytes: row.payloadBytes,
    payload_preview: row.payloadPreview,
  };
}
