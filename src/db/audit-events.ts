import type { Queryable } from './pool.js';

export type AuditActorKind = 'user' | 'api_key' | 'operator';

/** Who made a change: a console user (labelled by email), an API key (by its prefix) or the operator. */
export interface AuditActor {
  kind: AuditActorKind;
  /** The user's or key's id; null for the operator, who has none. */
  id: string | null;
  label: string;
}

export interface AuditEventInput {
  companyId: string;
  actor: AuditActor;
  action: string;
  targetType: string;
  targetId: string;
}

export interface AuditEventRecord {
  id: string;
  actorKind: AuditActorKind;
  actorId: string | null;
  actorLabel: string;
  action: string;
  targetType: string;
  targetId: string;
  occurredAt: Date;
}

/** Written with `q` the change's own transaction, so the row commits or rolls back with it. */
export async function insertAuditEvent(q: Queryable, event: AuditEventInput): Promise<void> {
  await q.query(
    `INSERT INTO audit_events (company_id, actor_kind, actor_id, actor_label, action, target_type, target_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [
      event.companyId,
      event.actor.kind,
      event.actor.id,
      event.actor.label,
      event.action,
      event.targetType,
      event.targetId,
    ],
  );
}

/**
 * Up to `limit` of the company's events next to the event `cursor`, newest first: older ones for
 * 'next', newer ones for 'previous' (the first page when `cursor` is null). Only one branch of
 * the union runs (its direction test is a one-time filter), each an index range scan. The id
 * (a bigint) comes back as a string.
 */
export async function listAuditEvents(
  q: Queryable,
  companyId: string,
  direction: 'next' | 'previous',
  cursor: string | null,
  limit: number,
): Promise<AuditEventRecord[]> {
  const result = await q.query<AuditEventRecord>(
    `SELECT id::text, actor_kind AS "actorKind", actor_id AS "actorId", actor_label AS "actorLabel", action,
            target_type AS "targetType", target_id AS "targetId", occurred_at AS "occurredAt"
     FROM ((SELECT * FROM audit_events
            WHERE $2 = 'next' AND company_id = $1 AND ($3::bigint IS NULL OR id < $3::bigint)
            ORDER BY id DESC LIMIT $4)
           UNION ALL
           (SELECT * FROM audit_events
            WHERE $2 = 'previous' AND company_id = $1 AND id > $3::bigint
            ORDER BY id LIMIT $4)) page
     ORDER BY id DESC`,
    [companyId, direction, cursor, limit],
  );
  return result.rows;
}

/** Deletes up to `limit` events that occurred before `before` (the 365-day retention); answers how many. */
export async function deleteAuditEventsBefore(q: Queryable, before: Date, limit: number): Promise<number> {
  const result = await q.query(
    `DELETE FROM audit_events WHERE id IN (SELECT id FROM audit_events WHERE occurred_at < $1 LIMIT $2)`,
    [before, limit],
  );
  return result.rowCount ?? 0;
}
