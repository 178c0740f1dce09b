/**
 * Two orderings on the ingest → health path: a sample that commits after a newer sample of
 * another signal is still evaluated (per-signal watermark), and the ingest and the manual
 * odometer write, running at once on one vehicle, take their locks in the same order.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adapters } from '../../providers/index.js';
import { withTransaction } from '../../src/db/pool.js';
import { lockVehicle } from '../../src/db/vehicles.js';
import { evaluateVehicles } from '../../src/evaluation/evaluate-vehicles.js';
import { processInbox } from '../../src/ingest/process-inbox.js';
import { updateVehicleByIntegrator } from '../../src/vehicles/vehicle-update.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createConnection, pushGeneric } from '../helpers/ingest.js';

let t: TestApp;
let company: { id: string; key: string };
let connection: { id: string; secret: string };
const now = new Date('2026-11-20T12:00:00Z');

beforeAll(async () => {
  t = await createTestApp();
  company = await t.createCompany();
  const created = await createConnection(t, company.id, 'generic');
  connection = { id: created.id, secret: created.generated_secret! };
});
afterAll(() => t.close());

async function vehicle(providerVehicleId: string): Promise<string> {
  return (
    await t.createVehicle(company.id, { provider_connection_id: connection.id, provider_vehicle_id: providerVehicleId })
  ).id;
}

/** Stores a push in the inbox (no worker runs here); the test processes it when it chooses. */
async function inboxPush(providerVehicleId: string, ts: string, signals: Record<string, unknown>): Promise<number> {
  const response = await pushGeneric(t, 'generic', connection.id, connection.secret, {
    readings: [{ vehicle: providerVehicleId, ts, signals }],
  });
  expect(response.statusCode).toBe(202);
  return response.json().data.inbox_id;
}

function ingest(inboxId: number) {
  return withTransaction(t.pool, (tx) =>
    processInbox(tx, inboxId, adapters, { includeProcessed: false, batch: false }),
  );
}

function evaluate(vehicleId: string) {
  return withTransaction(t.pool, (tx) => evaluateVehicles(tx, [vehicleId], now, { locking: 'first', cascade: true }));
}

async function alertTypes(vehicleId: string): Promise<string[]> {
  const { rows } = await t.pool.query(`SELECT health FROM vehicles WHERE id = $1`, [vehicleId]);
  return rows[0].health.alerts.map((a: { type: string }) => a.type);
}

describe('the health watermark', () => {
  it('evaluates a sample that commits after a newer sample of another signal', async () => {
    const id = await vehicle('late-1');
    // Two ingest workers hold one push each; the one with the older sample (an ABS code at 10:00)
    // is slower and commits after the other (battery and engine at 10:05) has been evaluated.
    const older = await inboxPush('late-1', '2026-11-20T10:00:00Z', { dtcs: [{ code: 'C0035' }] });
    const newer = await inboxPush('late-1', '2026-11-20T10:05:00Z', { battery_voltage: 12.6, engine_state: 'off' });
    await ingest(newer);
    await evaluate(id);
    expect(await alertTypes(id)).toEqual([]);

    await ingest(older);
    const summary = await evaluate(id);
    expect(summary.changed).toEqual([id]);
    expect(await alertTypes(id)).toEqual(['abs_warning']);
    const { rows } = await t.pool.query(
      `SELECT kind, payload ->> 'type' AS type FROM health_events WHERE vehicle_id = $1 ORDER BY id`,
      [id],
    );
    expect(rows).toContainEqual({ kind: 'alert_opened', type: 'abs_warning' });
    const state = await t.pool.query(`SELECT fed_through FROM vehicle_health_state WHERE vehicle_id = $1`, [id]);
    expect(state.rows[0].fed_through).toEqual({
      dtcs: '2026-11-20T10:00:00.000Z',
      battery_voltage: '2026-11-20T10:05:00.000Z',
      engine_state: '2026-11-20T10:05:00.000Z',
    });
  });

  it('does not feed a sample older than what was already fed of its own signal (history, as for the latest state)', async () => {
    const id = await vehicle('late-2');
    await ingest(await inboxPush('late-2', '2026-11-20T10:05:00Z', { dtcs: [] }));
    await evaluate(id);
    await ingest(await inboxPush('late-2', '2026-11-20T10:00:00Z', { dtcs: [{ code: 'C0035' }] }));
    await evaluate(id);
    expect(await alertTypes(id)).toEqual([]);
  });
});

describe('the vehicle lock order', () => {
  it('an ingest batch and a manual odometer write on one vehicle at once both commit, without a deadlock', async () => {
    const id = await vehicle('busy-1');
    const inboxId = await inboxPush('busy-1', '2026-11-20T10:00:00Z', { odometer_km: 1200, fuel_percent: 70 });

    // PUT /vehicles/{id} with an odometer: it locks the vehicle first, then writes its latest state.
    const put = await t.pool.connect();
    try {
      await put.query('BEGIN');
      await lockVehicle(put, company.id, id);
      const ingesting = ingest(inboxId);
      // The ingest waits on a lock before the manual write goes on: they now run into each other.
      await expect
        .poll(async () => {
          const { rows } = await t.pool.query(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
          );
          return rows[0].n;
        })
        .toBe(1);
      const updated = await updateVehicleByIntegrator(put, company.id, id, { odometerMiles: 800 }, now);
      await put.query('COMMIT');
      expect(updated.signals.odometer).toMatchObject({ source: 'manual' });
      const outcome = await ingesting;
      expect(outcome.rows).toMatchObject([{ inboxId, samples: 2, error: null }]);
    } catch (error) {
      await put.query('ROLLBACK');
      throw error;
    } finally {
      put.release();
    }
    const { rows } = await t.pool.query(
      `SELECT source, value_num FROM readings WHERE vehicle_id = $1 AND signal = 'odometer_km' ORDER BY recorded_at`,
      [id],
    );
    expect(rows).toEqual([
      { source: 'generic', value_num: 1200 },
      { source: 'manual', value_num: expect.closeTo(1287.475, 2) },
    ]);
  });
});
