/**
 * A run as the public API and the run webhooks show it (docs/api.md "Resources"). The API's response schema
 * (src/api/schemas/run.ts) checks this shape where routes answer with it.
 */
import { schedulingStatusOf, type RunRecord } from '../domain/run.js';

const iso = (value: Date | null) => (value ? value.toISOString() : null);

export type PresentedRun = ReturnType<typeof presentRun>;

export function presentRun(run: RunRecord) {
  const customer = run.customer;
  return {
    id: run.id,
    title: run.title,
    description: run.description,
    status: run.status,
    scheduling_state: run.schedulingState,
    scheduling_status: schedulingStatusOf(run.schedulingState),
    reference_code: run.referenceCode,
    created_at: run.createdAt.toISOString(),
    updated_at: run.updatedAt.toISOString(),
    appointment: {
      preferred_start: iso(run.preferredStart),
      preferred_end: iso(run.preferredEnd),
      start: iso(run.appointmentStart),
      end: iso(run.appointmentEnd),
      confirmed_at: iso(run.confirmedAt),
    },
    appointment_time: run.appointmentTime,
    customer_requested_time: run.customerRequestedTime,
    customer: customer
      ? {
          name: customer.name,
          email: customer.email,
          phone: customer.phone,
          address: customer.address,
          display_address: customer.display_address,
        }
      : null,
    vehicle: run.vehicle
      ? {
          id: run.vehicle.id,
          license_plate: run.vehicle.licensePlate,
          make: run.vehicle.make,
          model: run.vehicle.model,
          vin: run.vehicle.vin,
          year: run.vehicle.year,
        }
      : null,
    items: run.items,
  };
}
