/**
 * The webhook payload of run events (docs/webhooks.md "Envelope and payload"): every Run field unchanged,
 * plus owner_company, service_location (always present), customer.id / first_name / last_name
 * and appointment.external_id (= the run id). Pure: the outbox loads the inputs.
 */
import type { PresentedRun } from '../presenters/run.js';
import type { ServiceLocationRecord } from '../db/service-locations.js';
import type { DispatchProposal, RunEventKind } from '../domain/run.js';
import { assembleAddress, splitAddress, type AddressParts } from '../domain/address.js';

/** Changes when the envelope shape or the signing scheme changes (docs/api.md "Versioning"). */
export const webhookApiVersion = '2026-11-01';

export type ServiceLocationSource = 'run' | 'vehicle_home' | 'learned' | 'legacy';

export interface ServiceLocation extends AddressParts {
  id: string | null;
  name: string | null;
  display_address: string | null;
  source: ServiceLocationSource | null;
}

/** Where the work happens, by the spec's precedence; the outbox finds the first that exists. */
export type LocationChoice =
  | { source: 'run' | 'vehicle_home' | 'learned'; location: ServiceLocationRecord }
  | { source: 'legacy'; text: string }
  | null;

export interface WebhookRun extends Omit<PresentedRun, 'customer' | 'appointment'> {
  appointment: PresentedRun['appointment'] & { external_id: string };
  customer:
    | (NonNullable<PresentedRun['customer']> & {
        id: string | null;
        first_name: string | null;
        last_name: string | null;
      })
    | null;
  owner_company: { id: string; name: string; external_ids: Record<string, string> };
  service_location: ServiceLocation;
  dispatch_proposal: DispatchProposal | null;
}

export interface WebhookEnvelope {
  event: RunEventKind | 'webhook.test';
  event_id: string;
  api_version: string;
  timestamp: string;
  data: WebhookRun;
}

const emptyLocation: ServiceLocation = {
  id: null,
  name: null,
  street_1: null,
  street_2: null,
  city: null,
  state: null,
  postal_code: null,
  country: null,
  display_address: null,
  source: null,
};

function serviceLocation(choice: LocationChoice): ServiceLocation {
  if (!choice) return emptyLocation;
  if (choice.source === 'legacy') {
    // A free-text copy: split only what can be placed with confidence.
    return { ...emptyLocation, ...splitAddress(choice.text), display_address: choice.text, source: 'legacy' };
  }
  const l = choice.location;
  const structured = [l.street1, l.street2, l.city, l.state, l.postalCode, l.country].some((part) => part !== null);
  const parts = structured
    ? {
        street_1: l.street1,
        street_2: l.street2,
        city: l.city,
        state: l.state,
        postal_code: l.postalCode,
        country: l.country,
      }
    : splitAddress(l.displayAddress);
  return {
    id: l.id,
    name: l.name,
    ...parts,
    display_address:
      l.displayAddress ??
      assembleAddress({
        street: l.street1,
        street_2: l.street2,
        city: l.city,
        state: l.state,
        postal_code: l.postalCode,
        country: l.country,
      }),
    source: choice.source,
  };
}

/** "Ana Maria Lopez" → first "Ana", last "Maria Lopez"; one token is a first name only. */
function splitName(name: string | null): { first_name: string | null; last_name: string | null } {
  const tokens = name?.trim().split(/\s+/).filter(Boolean) ?? [];
  if (tokens.length === 0) return { first_name: null, last_name: null };
  return { first_name: tokens[0]!, last_name: tokens.length > 1 ? tokens.slice(1).join(' ') : null };
}

export function buildWebhookRun(
  run: PresentedRun,
  extras: {
    company: { id: string; name: string; externalIds: Record<string, string> };
    contactId: string | null;
    location: LocationChoice;
    dispatchProposal: DispatchProposal | null;
  },
): WebhookRun {
  return {
    ...run,
    appointment: { ...run.appointment, external_id: run.id },
    customer: run.customer ? { ...run.customer, id: extras.contactId, ...splitName(run.customer.name) } : null,
    owner_company: { id: extras.company.id, name: extras.company.name, external_ids: extras.company.externalIds },
    service_location: serviceLocation(extras.location),
    dispatch_proposal: extras.dispatchProposal,
  };
}

/**
 * The bytes of a WebhookEnvelope around `dataJson`, the run's JSON as stored in the outbox: the
 * payload is spliced in, never parsed and re-serialized per delivery.
 */
export function webhookEnvelopeBytes(
  kind: WebhookEnvelope['event'],
  eventId: string,
  occurredAt: Date,
  dataJson: string,
): Buffer {
  const head: Omit<WebhookEnvelope, 'data'> = {
    event: kind,
    event_id: eventId,
    api_version: webhookApiVersion,
    timestamp: occurredAt.toISOString(),
  };
  return Buffer.from(`${JSON.stringify(head).slice(0, -1)},"data":${dataJson}}`);
}

/** The fully synthetic run a `webhook.test` carries: every field filled, nothing real. */
export function syntheticWebhookRun(
  company: { id: string; name: string; externalIds: Record<string, string> },
  now: Date,
): WebhookRun {
  const start = new Date(now.getTime() + 2 * 86_400_000);
  const end = new Date(start.getTime() + 2 * 3_600_000);
  const iso = (d: Date) => d.toISOString();
  const run: PresentedRun = {
    id: '00000000-0000-4000-8000-000000000000',
    title: 'Test run: oil change and brake inspection',
    description: 'Synthetic run sent by Send test; it does not exist.',
    status: 'open',
    scheduling_state: 'proposed',
    scheduling_status: 'proposed',
    reference_code: 'R-TEST0000',
    created_at: iso(now),
    updated_at: iso(now),
    appointment: {
      preferred_start: iso(start),
      preferred_end: iso(end),
      start: iso(start),
      end: iso(end),
      confirmed_at: null,
    },
    appointment_time: { start: iso(start), end: iso(end), state: 'proposed' },
    customer_requested_time: { preferred_start: iso(start), preferred_end: iso(end) },
    customer: {
      name: 'Test Customer',
      email: 'test.customer@example.com',
      phone: '+1 555 0100',
      address: { street: '1 Main St', city: 'Springfield', state: 'IL', postal_code: '62701' },
      display_address: '1 Main St, Springfield, IL 62701',
    },
    vehicle: {
      id: '00000000-0000-4000-8000-000000000001',
      license_plate: 'TEST-1',
      make: 'Ford',
      model: 'Transit',
      vin: '1FTBW3XM6HKA00001',
      year: 2021,
    },
    items: [
      { title: 'Oil change', description: null, status: 'pending', type: 'oil_change' },
      { title: 'Brake inspection', description: null, status: 'pending', type: 'brake_inspection' },
    ],
  };
  return buildWebhookRun(run, {
    company,
    contactId: '00000000-0000-4000-8000-000000000002',
    location: {
      source: 'run',
      location: {
        id: '00000000-0000-4000-8000-000000000003',
        companyId: company.id,
        name: 'Main yard',
        street1: '1 Main St',
        street2: null,
        city: 'Springfield',
        state: 'IL',
        postalCode: '62701',
        country: 'US',
        displayAddress: null,
        latitude: 39.7817,
        longitude: -89.6501,
      },
    },
    dispatchProposal: null,
  });
}
