/**
 * What finding, creating and deleting a core webhook subscription and Send test do, shared by the public API
 * (src/api/routes/webhook-subscriptions.ts) and the developer console, so both take the same code path.
 */
import type { FastifyBaseLogger } from 'fastify';
import { recordAudit } from '../audit/record.js';
import type { AuditActor } from '../db/audit-events.js';
import type { Config } from '../config.js';
import { findCompany } from '../db/companies.js';
import { withTransaction, type Pool, type Queryable } from '../db/pool.js';
import {
  countSubscriptions,
  deleteSubscription,
  findSubscription,
  insertSubscription,
  insertWebhookEvents,
  type SubscriptionRecord,
} from '../db/webhooks.js';
import { isRecordId } from '../domain/ids.js';
import { invalidRequest, notFound } from '../errors.js';
import { enqueueAfterCommit } from '../queue/after-commit.js';
import type { Queues } from '../queue/queues.js';
import { encryptSecret, newSecret } from '../security/secrets.js';
import { requestRelay } from '../queue/enqueue-webhooks.js';
import { targetUrlProblem } from '../http/ssrf.js';
import { syntheticWebhookRun } from './webhook-run.js';
import { createWithinCap } from '../db/company-caps.js';

/** The company's subscription, or 404 (another company's is not found either). */
export async function requireWebhookSubscription(
  pool: Pool,
  companyId: string,
  id: string,
): Promise<SubscriptionRecord> {
  const subscription = isRecordId(id) ? await findSubscription(pool, companyId, id) : null;
  if (!subscription) throw notFound('webhook subscription');
  return subscription;
}

export interface CreatedSubscription {
  subscription: SubscriptionRecord;
  /** Shown once; stored sealed with SECRETS_KEY. */
  signingSecret: string;
}

/**
 * Checks the URL (the delivery client checks the resolved address again at connect time), then
 * creates within the company's cap. `alongside` runs in the same transaction (the console's flash
 * of the secret): what it writes commits or rolls back with the subscription.
 */
export async function createWebhookSubscription(
  deps: { pool: Pool; config: Config },
  companyId: string,
  actor: AuditActor,
  url: string,
  events: string[],
  alongside?: (tx: Queryable, created: CreatedSubscription) => Promise<void>,
): Promise<CreatedSubscription> {
  const problem = targetUrlProblem(url, deps.config.webhookAllowNets);
  if (problem) throw invalidRequest([{ field: 'url', message: problem }]);
  const signingSecret = newSecret('whsec_');
  const cap = {
    resource: 'webhook subscriptions',
    limit: deps.config.webhookSubscriptionsPerCompany,
    count: countSubscriptions,
  };
  return createWithinCap(deps.pool, cap, companyId, async (tx) => {
    const subscription = await insertSubscription(tx, {
      companyId,
      url,
      events,
      secretCiphertext: encryptSecret(deps.config.secretsKey, signingSecret),
    });
    await recordAudit(tx, companyId, actor, 'webhook_subscription.created', {
      type: 'webhook_subscription',
      id: subscription.id,
    });
    await alongside?.(tx, { subscription, signingSecret });
    return { subscription, signingSecret };
  });
}

/**
 * Deletes the company's subscription with its audit row: from the commit on, the relay fans no
 * event out to it and the delivery worker sends nothing more to it. 404 for one already deleted
 * or not the company's.
 */
export function removeWebhookSubscription(
  pool: Pool,
  companyId: string,
  actor: AuditActor,
  id: string,
): Promise<SubscriptionRecord> {
  return withTransaction(pool, async (tx) => {
    const deleted = isRecordId(id) ? await deleteSubscription(tx, companyId, id) : null;
    if (!deleted) throw notFound('webhook subscription');
    await recordAudit(tx, companyId, actor, 'webhook_subscription.deleted', { type: 'webhook_subscription', id });
    return deleted;
  });
}

/** Queues webhook.test, a fully synthetic run, to one subscription; returns the event id. */
export async function sendWebhookTest(
  deps: { pool: Pool; queues: Queues; now: () => Date },
  log: FastifyBaseLogger,
  subscription: SubscriptionRecord,
): Promise<string> {
  const company = (await findCompany(deps.pool, subscription.companyId))!;
  const [event] = await insertWebhookEvents(deps.pool, [
    {
      companyId: subscription.companyId,
      runId: null,
      kind: 'webhook.test',
      payload: syntheticWebhookRun(company, deps.now()),
      subscriptionId: subscription.id,
    },
  ]);
  await enqueueAfterCommit(log, 'webhooks.relay', () => requestRelay(deps.queues));
  return event!.id;
}
