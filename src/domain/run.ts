/**
 * Run vocabulary. A run is one service job (work order, appointment) for a vehicle.
 * - status: the work lifecycle (open → in_progress → completed, or dismissed).
 * - scheduling_state: the appointment lifecycle (requested → proposed → confirmed, or cancelled).
 * - scheduling_status: the deprecated spelling of scheduling_state, computed, never stored.
 */
export const runStatuses = ['open', 'in_progress', 'completed', 'dismissed'] as const;
export type RunStatus = (typeof runStatuses)[number];

export const schedulingStates = ['requested', 'proposed', 'confirmed', 'cancelled'] as const;
export type SchedulingState = (typeof schedulingStates)[number];

export const runEventKinds = [
  'run.created',
  'run.appointment_updated',
  'run.appointment_confirmed',
  'run.appointment_cancelled',
  'run.completed',
  'run.dispatch_proposed',
] as const;
export type RunEventKind = (typeof runEventKinds)[number];

/** Deprecated `scheduling_status` values, as the spec maps them from `scheduling_state`. */
export function schedulingStatusOf(state: SchedulingState): 'pending' | 'proposed' | 'confirmed' | null {
  switch (state) {
    case 'requested':
      return 'pending';
    case 'proposed':
      return 'proposed';
    case 'confirmed':
      return 'confirmed';
    case 'cancelled':
      return null;
  }
}

/** The deprecated `scheduling_status` query filter, mapped onto `scheduling_state`. */
export const schedulingStatusFilter = {
  confirmed: 'confirmed',
  pending: 'requested',
  proposed: 'proposed',
  same_day_requested: 'requested',
} as const satisfies Record<string, SchedulingState>;

export interface RunItem {
  title: string;
  description: string | null;
  status: string;
  type: string;
}

export interface Address {
  street: string | null;
  city: string | null;
  state: string | null;
  postal_code: string | null;
}

export interface RunCustomer {
  name: string | null;
  email: string | null;
  phone: string | null;
  address: Address | null;
  display_address: string | null;
}

export interface DispatchProposal {
  assignee: { type: 'shop' | 'technician'; id: string; name: string };
  reason: string;
  proposed_at: string;
}

/** The part of a run that the state machine reads and writes. */
export interface RunState {
  status: RunStatus;
  schedulingState: SchedulingState;
  appointmentStart: Date | null;
  appointmentEnd: Date | null;
  confirmedAt: Date | null;
  appointmentTime: Record<string, unknown> | null;
  dispatchProposal: DispatchProposal | null;
  completedAt: Date | null;
}

export interface RunVehicleRef {
  id: string;
  licensePlate: string | null;
  make: string | null;
  model: string | null;
  vin: string | null;
  year: number | null;
}

export interface RunRecord extends RunState {
  id: string;
  companyId: string;
  vehicleId: string | null;
  contactId: string | null;
  serviceLocationId: string | null;
  referenceCode: string;
  title: string | null;
  description: string | null;
  preferredStart: Date | null;
  preferredEnd: Date | null;
  customerRequestedTime: Record<string, unknown> | null;
  customer: RunCustomer | null;
  items: RunItem[];
  createdAt: Date;
  updatedAt: Date;
  vehicle: RunVehicleRef | null;
}

/** A shop or technician the dispatch assistant may propose for a run. */
export interface RosterMember {
  id: string;
  type: 'shop' | 'technician';
  name: string;
  /** Run item types it can do, e.g. oil_change, inspection, brake_inspection. */
  skills: string[];
  latitude: number | null;
  longitude: number | null;
  /** Open runs it can take at once. */
  capacity: number;
  active: boolean;
}
