import Type, { type Static } from 'typebox';
import { runStatuses, schedulingStates } from '../../domain/run.js';
import { Nullable, NullableString, NullableTimestamp, StringEnum, Timestamp } from '../../web/schemas.js';

export const RunStatusSchema = StringEnum(runStatuses);
export const SchedulingStateSchema = StringEnum(schedulingStates);

export const Address = Type.Object({
  street: NullableString,
  city: NullableString,
  state: NullableString,
  postal_code: NullableString,
});

export const RunAppointment = Type.Object({
  preferred_start: NullableTimestamp,
  preferred_end: NullableTimestamp,
  start: NullableTimestamp,
  end: NullableTimestamp,
  confirmed_at: NullableTimestamp,
});

export const RunCustomer = Type.Object({
  name: NullableString,
  email: NullableString,
  phone: NullableString,
  address: Nullable(Address),
  display_address: NullableString,
});

export const RunItem = Type.Object({
  title: NullableString,
  description: NullableString,
  status: NullableString,
  type: NullableString,
});

export const RunVehicle = Type.Object({
  id: Type.String(),
  license_plate: NullableString,
  make: NullableString,
  model: NullableString,
  vin: NullableString,
  year: Nullable(Type.Integer()),
});

const FreeForm = Nullable(Type.Object({}, { additionalProperties: true }));

export const Run = Type.Object({
  id: Type.String(),
  title: NullableString,
  description: NullableString,
  status: RunStatusSchema,
  scheduling_state: SchedulingStateSchema,
  scheduling_status: Nullable(
    Type.String({ description: 'Deprecated. Computed from scheduling_state: requested → pending, cancelled → null.' }),
  ),
  reference_code: Type.String(),
  created_at: Timestamp,
  updated_at: Timestamp,
  appointment: RunAppointment,
  appointment_time: FreeForm,
  customer_requested_time: FreeForm,
  customer: Nullable(RunCustomer),
  vehicle: Nullable(RunVehicle),
  items: Type.Array(RunItem),
});
export type Run = Static<typeof Run>;
