import { describe, expect, it } from 'vitest';
import type { RunState } from '../../src/domain/run.js';
import { applyRunOperation, type RunOperation } from '../../src/runs/run-machine.js';

const now = new Date('2026-11-22T10:00:00Z');
const start = new Date('2026-11-25T09:00:00Z');
const end = new Date('2026-11-25T11:00:00Z');

function state(overrides: Partial<RunState> = {}): RunState {
  return {
    status: 'open',
    schedulingState: 'requested',
    appointmentStart: null,
    appointmentEnd: null,
    confirmedAt: null,
    appointmentTime: null,
    dispatchProposal: null,
    completedAt: null,
    ...overrides,
  };
}

function apply(s: RunState, op: RunOperation) {
  const result = applyRunOperation(s, op, now);
  if (!result.ok) throw new Error(`refused: ${result.message}`);
  return result;
}

describe('run state machine', () => {
  it('propose moves any live or cancelled scheduling state to proposed and emits run.appointment_updated', () => {
    for (const schedulingState of ['requested', 'proposed', 'confirmed', 'cancelled'] as const) {
      const result = apply(state({ schedulingState }), { kind: 'propose', start, end });
      expect(result.state.schedulingState).toBe('proposed');
      expect(result.state.appointmentStart).toEqual(start);
      expect(result.state.confirmedAt).toBeNull();
      expect(result.state.appointmentTime).toEqual({
        start: start.toISOString(),
        end: end.toISOString(),
        state: 'proposed',
      });
      expect(result.events).toEqual(['run.appointment_updated']);
    }
  });

  it('refuses a window whose start is not before its end', () => {
    expect(applyRunOperation(state(), { kind: 'propose', start: end, end: start }, now)).toEqual({
      ok: false,
      message: 'start must be before end',
    });
  });

  it('confirm takes the proposed window, stamps confirmed_at and emits run.appointment_confirmed', () => {
    const proposed = apply(state(), { kind: 'propose', start, end }).state;
    const result = apply(proposed, { kind: 'confirm' });
    expect(result.state).toMatchObject({
      schedulingState: 'confirmed',
      appointmentStart: start,
      appointmentEnd: end,
      confirmedAt: now,
    });
    expect(result.events).toEqual(['run.appointment_confirmed']);
  });

  it('confirm of a request needs a window, and confirming twice is refused', () => {
    expect(applyRunOperation(state(), { kind: 'confirm' }, now).ok).toBe(false);
    const confirmed = apply(state(), { kind: 'confirm', start, end }).state;
    expect(confirmed.schedulingState).toBe('confirmed');
    expect(applyRunOperation(confirmed, { kind: 'confirm' }, now)).toEqual({
      ok: false,
      message: 'the appointment is already confirmed',
    });
  });

  it('cancel works from requested, proposed and confirmed, never twice', () => {
    for (const schedulingState of ['requested', 'proposed', 'confirmed'] as const) {
      const result = apply(state({ schedulingState }), { kind: 'cancel' });
      expect(result.state.schedulingState).toBe('cancelled');
      expect(result.events).toEqual(['run.appointment_cancelled']);
    }
    expect(applyRunOperation(state({ schedulingState: 'cancelled' }), { kind: 'cancel' }, now).ok).toBe(false);
  });

  it('complete emits run.completed from open and in_progress, and again after reopen', () => {
    const completed = apply(state(), { kind: 'complete' });
    expect(completed.state).toMatchObject({ status: 'completed', completedAt: now });
    expect(completed.events).toEqual(['run.completed']);
    expect(applyRunOperation(completed.state, { kind: 'complete' }, now).ok).toBe(false);
    const reopened = apply(completed.state, { kind: 'reopen' });
    expect(reopened.state).toMatchObject({ status: 'open', completedAt: null });
    expect(reopened.events).toEqual([]);
    expect(apply(reopened.state, { kind: 'complete' }).events).toEqual(['run.completed']);
    const started = apply(state(), { kind: 'start' });
    expect(started.state.status).toBe('in_progress');
    expect(apply(started.state, { kind: 'complete' }).events).toEqual(['run.completed']);
  });

  it('start only from open; reopen only from completed or dismissed', () => {
    expect(applyRunOperation(state({ status: 'in_progress' }), { kind: 'start' }, now).ok).toBe(false);
    expect(applyRunOperation(state({ status: 'open' }), { kind: 'reopen' }, now).ok).toBe(false);
    expect(apply(state({ status: 'dismissed' }), { kind: 'reopen' }).state.status).toBe('open');
  });

  it('dismiss cancels a live appointment so the receiver learns it is off', () => {
    const withAppointment = apply(state({ schedulingState: 'confirmed' }), { kind: 'dismiss' });
    expect(withAppointment.state).toMatchObject({ status: 'dismissed', schedulingState: 'cancelled' });
    expect(withAppointment.events).toEqual(['run.appointment_cancelled']);
    const alreadyCancelled = apply(state({ schedulingState: 'cancelled' }), { kind: 'dismiss' });
    expect(alreadyCancelled.events).toEqual([]);
  });

  it('a finished run takes no scheduling or dispatch moves', () => {
    for (const status of ['completed', 'dismissed'] as const) {
      for (const op of [
        { kind: 'propose', start, end },
        { kind: 'confirm', start, end },
        { kind: 'cancel' },
        { kind: 'dismiss' },
        { kind: 'dispatch_proposal', assignee: { type: 'shop', id: 's1', name: 'Shop' }, reason: 'nearest' },
      ] as RunOperation[]) {
        expect(applyRunOperation(state({ status }), op, now).ok).toBe(false);
      }
    }
  });

  it('dispatch proposal records assignee and reason and emits run.dispatch_proposed', () => {
    const result = apply(state(), {
      kind: 'dispatch_proposal',
      assignee: { type: 'technician', id: 't7', name: 'Dana' },
      reason: 'closest with brake skills',
    });
    expect(result.state.dispatchProposal).toEqual({
      assignee: { type: 'technician', id: 't7', name: 'Dana' },
      reason: 'closest with brake skills',
      proposed_at: now.toISOString(),
    });
    expect(result.events).toEqual(['run.dispatch_proposed']);
  });
});
