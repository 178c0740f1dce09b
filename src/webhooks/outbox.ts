/**
 * The transactional outbox of run events: called inside the transaction that changes a run, so
 * the event exists exactly when the change does. The payload is the WebhookRun as of that moment.
 */
import { findCompany } from '../db/companies.js';
import type { PoolClient, Queryable } from '../db/pool.js';
import { findRun } from '../db/runs.js';
import { findRunLocations } from '../db/service-locations.js';
import { insertWebhookEvents } from '../db/webhooks.js';
import type { RunEventKind } from '../domain/run.js';
import { presentRun } from '../presenters/run.js';
import { buildWebhookRun, type LocationChoice, type WebhookRun } from './webhook-run.js';

export async function webhookRunOf(q: Queryable, companyId: string, runId: string): Promise<WebhookRun> {
  // One after another: on a transaction's client, overlapping queries are deprecated in pg.
  const run = await findRun(q, companyId, runId);
  const company = await findCompany(q, companyId);
  const locations = await findRunLocations(q, runId);
  if (!run || !company) throw new Error(`run ${runId} of company ${companyId} not found`);
  const legacy = run.customer?.display_address;
  const location: LocationChoice = locations[0] ?? (legacy ? { source: 'legacy', text: legacy } : null);
  return buildWebhookRun(presentRun(run), {
    company,
    contactId: run.contactId,
    location,
    dispatchProposal: run.dispatchProposal,
  });
}

/** Writes one outbox row per event kind for the run's current state; nothing for no kinds. */
export async function recordRunEvents(
  tx: PoolClient,
  companyId: string,
  runId: string,
  kinds: readonly RunEventKind[],
): Promise<string[]> {
  if (kinds.length === 0) return [];
  const payload = await webhookRunOf(tx, companyId, runId);
  const events = await insertWebhookEvents(
    tx,
    kinds.map((kind) => ({ companyId, runId, kind, payload, subscriptionId: null })),
  );
  return events.map((e) => e.id);
}
