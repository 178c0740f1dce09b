/**
 * The company's audit log (DESIGN §12, "Activity"): one row per change its people or API keys
 * make. `recordAudit` takes the change's own transaction, so the row and the change commit or
 * roll back together; an action that has no row to show for it never happened.
 */
import { insertAuditEvent, type AuditActor } from '../db/audit-events.js';
import type { Queryable } from '../db/pool.js';

/** Every action the log records, with how the Activity page words it. */
export const auditActions = {
  'api_key.created': 'API key created',
  'api_key.revoked': 'API key revoked',
  'webhook_subscription.created': 'Webhook subscription created',
  'webhook_subscription.deleted': 'Webhook subscription deleted',
  'monitoring_subscription.created': 'Monitoring subscription created',
  'monitoring_subscription.deleted': 'Monitoring subscription deleted',
  'user.invited': 'User invited',
  'user.disabled': 'User disabled',
  'user.role_changed': 'Role changed',
  'user.password_changed': 'Password changed',
  'sign_in.succeeded': 'Signed in',
  'sign_in.failed': 'Sign-in failed',
} as const;
export type AuditAction = keyof typeof auditActions;

export const auditTargetTypes = ['api_key', 'webhook_subscription', 'monitoring_subscription', 'user'] as const;
export type AuditTargetType = (typeof auditTargetTypes)[number];

/** A console user acts under their email. */
export function userActor(user: { userId: string; email: string }): AuditActor {
  return { kind: 'user', id: user.userId, label: user.email };
}

/** An API key acts under its prefix, never more of it. */
export function apiKeyActor(key: { keyId: string; keyPrefix: string }): AuditActor {
  return { kind: 'api_key', id: key.keyId, label: key.keyPrefix };
}

/** The operator (docs/operator-api.md) acts under the one admin token: no id, one label. */
export const operatorActor: AuditActor = { kind: 'operator', id: null, label: 'operator' };

export function recordAudit(
  tx: Queryable,
  companyId: string,
  actor: AuditActor,
  action: AuditAction,
  target: { type: AuditTargetType; id: string },
): Promise<void> {
  return insertAuditEvent(tx, { companyId, actor, action, targetType: target.type, targetId: target.id });
}
