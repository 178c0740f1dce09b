/** An audit event as GET /v1/audit-events shows it. */
import type { AuditAction, AuditTargetType } from '../audit/record.js';
import type { AuditEventRecord } from '../db/audit-events.js';

export function presentAuditEvent(event: AuditEventRecord) {
  return {
    id: event.id,
    actor: { kind: event.actorKind, id: event.actorId, label: event.actorLabel },
    action: event.action as AuditAction,
    target: {
      type: event.targetType as AuditTargetType,
      id: event.targetId,
    },
    occurred_at: event.occurredAt.toISOString(),
  };
}
