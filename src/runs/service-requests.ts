/**
 * A service request opens a run for a vehicle (run.created, written to the outbox), or folds into
 * the vehicle's run that is still open (status open or in_progress): its items are added there
 * and no run.created is emitted.
 * The vehicle row lock serialises concurrent requests for one vehicle, so two requests never
 * open two runs.
 */
import type { RunCustomer, RunEventKind, RunItem } from '../domain/run.js';
import { AppError, notFound } from '../errors.js';
import { upsertContact } from '../db/contacts.js';
import { insertRun, lockOpenRunOfVehicle, setRunItems } from '../db/runs.js';
import { insertServiceLocation, type ServiceLocationInput } from '../db/service-locations.js';
import { lockVehicle } from '../db/vehicles.js';
import type { PoolClient } from '../db/pool.js';
import { recordRunEvents } from '../webhooks/outbox.js';
import { newReferenceCode } from './reference-code.js';

export interface ServiceRequest {
  vehicleId: string;
  title: string | null;
  description: string | null;
  items: Array<{ title: string; description: string | null; type: string }>;
  customer: RunCustomer | null;
  preferredStart: Date | null;
  preferredEnd: Date | null;
  location: ServiceLocationInput | null;
}

export interface ServiceRequestOutcome {
  runId: string;
  folded: boolean;
  events: RunEventKind[];
}

/** Items already on the run (same type and title) are not added twice. */
export function mergeRunItems(existing: RunItem[], added: RunItem[]): RunItem[] {
  const key = (item: RunItem) => `${item.type}\u0000${item.title.trim().toLowerCase()}`;
  const seen = new Set(existing.map(key));
  const merged = [...existing];
  for (const item of added) {
    if (seen.has(key(item))) continue;
    seen.add(key(item));
    merged.push(item);
  }
  return merged;
}

export async function submitServiceRequest(
  tx: PoolClient,
  companyId: string,
  request: ServiceRequest,
): Promise<ServiceRequestOutcome> {
  const vehicle = await lockVehicle(tx, companyId, request.vehicleId);
  if (!vehicle) throw notFound('vehicle');
  if (!vehicle.active) throw new AppError('INVALID_STATE_TRANSITION', 'vehicle is deactivated');
  const items: RunItem[] = request.items.map((item) => ({ ...item, status: 'pending' }));

  const open = await lockOpenRunOfVehicle(tx, vehicle.id);
  if (open) {
    await setRunItems(tx, open.id, mergeRunItems(open.items, items));
    return { runId: open.id, folded: true, events: [] };
  }

  const customer = request.customer;
  const contactId = customer
    ? await upsertContact(tx, companyId, { name: customer.name, email: customer.email, phone: customer.phone })
    : null;
  const location = request.location ? await insertServiceLocation(tx, companyId, request.location) : null;
  const requestedTime =
    request.preferredStart || request.preferredEnd
      ? {
          preferred_start: request.preferredStart?.toISOString() ?? null,
          preferred_end: request.preferredEnd?.toISOString() ?? null,
        }
      : null;
  for (let attempt = 0; attempt < 5; attempt++) {
    const runId = await insertRun(tx, {
      companyId,
      vehicleId: vehicle.id,
      contactId,
      serviceLocationId: location?.id ?? null,
      referenceCode: newReferenceCode(),
      title: request.title,
      description: request.description,
      preferredStart: request.preferredStart,
      preferredEnd: request.preferredEnd,
      customerRequestedTime: requestedTime,
      customer,
      items,
    });
    if (runId) {
      await recordRunEvents(tx, companyId, runId, ['run.created']);
      return { runId, folded: false, events: ['run.created'] };
    }
  }
  throw new Error('could not allocate a unique run reference code');
}
