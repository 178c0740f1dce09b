/**
 * The run state machine: a pure function of (run state, operation, now) → (next state, events).
 * The caller persists the state and writes one outbox row per event in the same transaction.
 * Moves the spec leaves "not shown" are decided here and documented in docs/runs.md.
 */
import type { DispatchProposal, RunEventKind, RunState, RunStatus, SchedulingState } from '../domain/run.js';

export type RunOperation =
  | { kind: 'propose'; start: Date; end: Date }
  | { kind: 'confirm'; start?: Date; end?: Date }
  | { kind: 'cancel' }
  | { kind: 'start' }
  | { kind: 'complete' }
  | { kind: 'reopen' }
  | { kind: 'dismiss' }
  | { kind: 'dispatch_proposal'; assignee: DispatchProposal['assignee']; reason: string };

export type RunTransition = { ok: true; state: RunState; events: RunEventKind[] } | { ok: false; message: string };

const activeStatuses: readonly RunStatus[] = ['open', 'in_progress'];
const liveScheduling: readonly SchedulingState[] = ['requested', 'proposed', 'confirmed'];

function refuse(message: string): RunTransition {
  return { ok: false, message };
}

function appointmentTime(start: Date, end: Date, state: SchedulingState): Record<string, unknown> {
  return { start: start.toISOString(), end: end.toISOString(), state };
}

function requireActive(state: RunState, action: string): RunTransition | null {
  return activeStatuses.includes(state.status) ? null : refuse(`cannot ${action} a run that is ${state.status}`);
}

function validWindow(start: Date, end: Date): RunTransition | null {
  return start.getTime() < end.getTime() ? null : refuse('start must be before end');
}

export function applyRunOperation(state: RunState, operation: RunOperation, now: Date): RunTransition {
  switch (operation.kind) {
    case 'propose': {
      const refused = requireActive(state, 'propose an appointment for') ?? validWindow(operation.start, operation.end);
      if (refused) return refused;
      return {
        ok: true,
        state: {
          ...state,
          schedulingState: 'proposed',
          appointmentStart: operation.start,
          appointmentEnd: operation.end,
          confirmedAt: null,
          appointmentTime: appointmentTime(operation.start, operation.end, 'proposed'),
        },
        events: ['run.appointment_updated'],
      };
    }
    case 'confirm': {
      const refused = requireActive(state, 'confirm an appointment for');
      if (refused) return refused;
      if (state.schedulingState === 'confirmed') return refuse('the appointment is already confirmed');
      const start = operation.start ?? (state.schedulingState === 'proposed' ? state.appointmentStart : null);
      const end = operation.end ?? (state.schedulingState === 'proposed' ? state.appointmentEnd : null);
      if (!start || !end) return refuse('no proposed time to confirm: give start and end');
      const badWindow = validWindow(start, end);
      if (badWindow) return badWindow;
      return {
        ok: true,
        state: {
          ...state,
          schedulingState: 'confirmed',
          appointmentStart: start,
          appointmentEnd: end,
          confirmedAt: now,
          appointmentTime: appointmentTime(start, end, 'confirmed'),
        },
        events: ['run.appointment_confirmed'],
      };
    }
    case 'cancel': {
      const refused = requireActive(state, 'cancel the appointment of');
      if (refused) return refused;
      if (!liveScheduling.includes(state.schedulingState)) return refuse('the appointment is already cancelled');
      return { ok: true, state: cancelled(state), events: ['run.appointment_cancelled'] };
    }
    case 'start':
      if (state.status !== 'open') return refuse(`cannot start a run that is ${state.status}`);
      return { ok: true, state: { ...state, status: 'in_progress' }, events: [] };
    case 'complete': {
      const refused = requireActive(state, 'complete');
      if (refused) return refused;
      return { ok: true, state: { ...state, status: 'completed', completedAt: now }, events: ['run.completed'] };
    }
    case 'reopen':
      if (state.status !== 'completed' && state.status !== 'dismissed') {
        return refuse(`cannot reopen a run that is ${state.status}`);
      }
      return { ok: true, state: { ...state, status: 'open', completedAt: null }, events: [] };
    case 'dismiss': {
      const refused = requireActive(state, 'dismiss');
      if (refused) return refused;
      // A dismissed run keeps no live appointment: the receiver learns it is off.
      const live = liveScheduling.includes(state.schedulingState);
      const next = live ? cancelled(state) : state;
      return {
        ok: true,
        state: { ...next, status: 'dismissed' },
        events: live ? ['run.appointment_cancelled'] : [],
      };
    }
    case 'dispatch_proposal': {
      const refused = requireActive(state, 'propose dispatch for');
      if (refused) return refused;
      return {
        ok: true,
        state: {
          ...state,
          dispatchProposal: { assignee: operation.assignee, reason: operation.reason, proposed_at: now.toISOString() },
        },
        events: ['run.dispatch_proposed'],
      };
    }
  }
}

function cancelled(state: RunState): RunState {
  return {
    ...state,
    schedulingState: 'cancelled',
    appointmentTime: state.appointmentTime ? { ...state.appointmentTime, state: 'cancelled' } : { state: 'cancelled' },
  };
}
