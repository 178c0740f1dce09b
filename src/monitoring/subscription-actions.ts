/**
 * What finding, subscribing and deleting a monitoring subscription do, shared by the public API
 * (src/api/routes/monitoring-subscriptions.ts) and the developer console, so both take the same
 * code path. The dry run is src/dry-run/monitoring-dry-run.ts: it needs the CPU pool, above this folder.
 */
import type { Config } from '../config.js';
import { createWithinCap, type CompanyCap } from '../db/company-caps.js';
import { loadGeofenceIds } from '../db/geofences.js';
import {
  countMonitoringSubscriptions,
  deleteMonitoringSubscription,
  findMonitoringSubscription,
  insertMonitoringSubscription,
  type MonitoringSubscriptionRecord,
} from '../db/monitoring-subscriptions.js';
import { withTransaction, type Pool } from '../db/pool.js';
import { recordAudit } from '../audit/record.js';
import type { AuditActor } from '../db/audit-events.js';
import { findActiveVehicle } from '../db/vehicles.js';
import { isRecordId } from '../domain/ids.js';
import { invalidRequest, notFound, type FieldError } from '../errors.js';
import { targetUrlProblem } from '../http/ssrf.js';
import { encryptSecret, newSecret } from '../security/secrets.js';
import {
  canonicalKind,
  completeMonitoringOptions,
  monitoringTiers,
  tierKinds,
  type MonitoringKind,
  type MonitoringTier,
  type StoredMonitoringOptions,
} from '../domain/monitoring-kinds.js';

/** The company's subscription (a deleted one too), or 404: another company's is not found either. */
export async function requireMonitoringSubscription(
  pool: Pool,
  companyId: string,
  id: string,
): Promise<MonitoringSubscriptionRecord> {
  const subscription = isRecordId(id) ? await findMonitoringSubscription(pool, companyId, id) : null;
  if (!subscription) throw notFound('monitoring subscription');
  return subscription;
}

/**
 * The canonical kinds of a request (aliases resolved, duplicates dropped, request order kept),
 * and an error for each that the tier does not cover, naming the tier that does.
 */
function subscribedKinds(
  requested: readonly string[],
  tier: MonitoringTier,
): { kinds: MonitoringKind[]; errors: FieldError[] } {
  const kinds: MonitoringKind[] = [];
  const errors: FieldError[] = [];
  requested.forEach((name, index) => {
    const kind = canonicalKind(name);
    if (!kind) {
      errors.push({ field: `events.${index}`, message: `"${name}" is not a monitoring event kind` });
      return;
    }
    if (!tierKinds[tier].includes(kind)) {
      const covering = monitoringTiers.find((t) => tierKinds[t].includes(kind))!;
      const named = kind === name ? name : `${name} (${kind})`;
      errors.push({
        field: `events.${index}`,
        message: `${named} is not covered by the ${tier} tier; the ${covering} tier covers it`,
      });
      return;
    }
    if (!kinds.includes(kind)) kinds.push(kind);
  });
  return { kinds, errors };
}

export interface MonitoringSubscribeRequest {
  vehicleId: string;
  webhookUrl: string;
  /** Kind names as asked, aliases included. */
  events: readonly string[];
  tier: MonitoringTier;
  options: StoredMonitoringOptions | undefined;
}

export interface CreatedMonitoringSubscription {
  subscription: MonitoringSubscriptionRecord;
  /** Shown once; stored sealed with SECRETS_KEY. */
  signingSecret: string;
}

/**
 * Every field error at once (kinds the tier does not cover, the URL, geofences not the company's),
 * then 404 for a vehicle that is not an active vehicle of the company, then the insert within
 * MONITORING_SUBSCRIPTIONS_PER_COMPANY (409 LIMIT_REACHED past it).
 */
export async function subscribeToMonitoring(
  deps: {
    pool: Pool;
    config: Pick<Config, 'webhookAllowNets' | 'monitoringSubscriptionsPerCompany' | 'secretsKey'>;
  },
  companyId: string,
  actor: AuditActor,
  request: MonitoringSubscribeRequest,
): Promise<CreatedMonitoringSubscription> {
  const { tier } = request;
  const { kinds, errors } = subscribedKinds(request.events, tier);
  const urlProblem = targetUrlProblem(request.webhookUrl, deps.config.webhookAllowNets);
  if (urlProblem) errors.push({ field: 'webhook_url', message: urlProblem });
  const geofenceIds = request.options?.geofence_ids ?? null;
  if (geofenceIds && geofenceIds.length > 0) {
    // Another company's geofence is as unknown as a made-up id: a field error, revealing nothing.
    const own = new Set(await loadGeofenceIds(deps.pool, companyId, geofenceIds));
    geofenceIds.forEach((id, index) => {
      if (!own.has(id.toLowerCase())) {
        errors.push({ field: `options.geofence_ids.${index}`, message: 'is not one of your geofences' });
      }
    });
  }
  if (errors.length > 0) throw invalidRequest(errors);
  if (!(await findActiveVehicle(deps.pool, companyId, request.vehicleId))) throw notFound('vehicle');

  const cap: CompanyCap = {
    resource: 'monitoring subscriptions',
    limit: deps.config.monitoringSubscriptionsPerCompany,
    count: (q, company) => countMonitoringSubscriptions(q, company, { deleted: false, vehicleId: null }),
  };
  const signingSecret = newSecret('whsec_');
  const subscription = await createWithinCap(deps.pool, cap, companyId, async (tx) => {
    const created = await insertMonitoringSubscription(tx, {
      companyId,
      vehicleId: request.vehicleId,
      webhookUrl: request.webhookUrl,
      events: kinds,
      tier,
      options: completeMonitoringOptions({
        ...request.options,
        ...(geofenceIds ? { geofence_ids: geofenceIds.map((id) => id.toLowerCase()) } : {}),
      }),
      secretCiphertext: encryptSecret(deps.config.secretsKey, signingSecret),
    });
    await recordAudit(tx, companyId, actor, 'monitoring_subscription.created', {
      type: 'monitoring_subscription',
      id: created.id,
    });
    return created;
  });
  return { subscription, signingSecret };
}

/** Detection stops; the subscription stays readable as deleted. 404 for one already deleted or not the company's. */
export function removeMonitoringSubscription(
  pool: Pool,
  companyId: string,
  actor: AuditActor,
  id: string,
): Promise<MonitoringSubscriptionRecord> {
  return withTransaction(pool, async (tx) => {
    const deleted = isRecordId(id) ? await deleteMonitoringSubscription(tx, companyId, id) : null;
    if (!deleted) throw notFound('monitoring subscription');
    await recordAudit(tx, companyId, actor, 'monitoring_subscription.deleted', { type: 'monitoring_subscription', id });
    return deleted;
  });
}
