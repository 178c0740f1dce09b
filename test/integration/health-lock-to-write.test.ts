/**
 * The evaluation after new samples (`health.evaluate`) reads without locks and locks the vehicle
 * only to write (`locking: 'to-write'`), so an ingest batch that holds the vehicle meanwhile and
 * the evaluation wait for each other only for the write. What it read must still be current then:
 * ingest's own writes are (it queues an evaluation of its own), anything else moves it, nothing is
 * written, and the job evaluates again with the vehicle locked throughout.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adapters } from '../../providers/index.js';
import { withTransaction, type PoolClient } from '../../src/db/pool.js';
import { lockVehicle } from '../../src/db/vehicles.js';
import { evaluateVehicles } from '../../src/evaluation/evaluate-vehicles.js';
import { processInbox } from '../../src/ingest/process-inbox.js';
import { createLogger } from '../../src/log.js';
import { createMetrics } from '../../src/metrics.js';
import { healthHandlers } from '../../workers/health.worker.js';
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

/** A vehicle whose ingested ABS code an evaluation has yet to read. */
async function vehicleWithNewCode(providerVehicleId: string): Promise<string> {
  const { id } = await t.createVehicle(company.id, {
    provider_connection_id: connection.id,
    provider_vehicle_id: providerVehicleId,
  });
  const response = await pushGeneric(t, 'generic', connection.id, connection.secret, {
    readings: [{ vehicle: providerVehicleId, ts: '2026-11-20T10:00:00Z', signals: { dtcs: [{ code: 'C0035' }] } }],
  });
  expect(response.statusCode).toBe(202);
  await withTransaction(t.pool, (tx) =>
    processInbox(tx, response.json().data.inbox_id, adapters, { includeProcessed: false, batch: false }),
  );
  return id as string;
}

function evaluate(vehicleId: string, locking: 'to-write' | 'first') {
  return withTransaction(t.pool, (tx) => evaluateVehicles(tx, [vehicleId], now, { locking, cascade: true }));
}

/**
 * Holds the vehicle as a writer would (an ingest batch, an integrator's change), runs `write` in
 * that transaction once the evaluation started meanwhile waits for the lock to write, then
 * commits; answers the evaluation's outcome.
 */
async function evaluateWhileHeld<T>(
  vehicleId: string,
  evaluation: () => Promise<T>,
  write: (holder: PoolClient) => Promise<unknown>,
): Promise<T> {
  const holder = await t.pool.connect();
  try {
    await holder.query('BEGIN');
    await lockVehicle(holder, company.id, vehicleId);
    const evaluating = evaluation();
    // It has read everything and waits at the lock it takes to write, not at its first read.
    await expect
      .poll(async () => {
        const { rows } = await t.pool.query<{ query: string }>(
          `SELECT query FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        );
        return rows.map((row) => row.query.includes('AS c(id, inputs)'));
      })
      .toEqual([true]);
    await write(holder);
    await holder.query('COMMIT');
    return await evaluating;
  } catch (error) {
    await holder.query('ROLLBACK');
    throw error;
  } finally {
    holder.release();
  }
}

/** An integrator's change to the vehicle's health config: one of the inputs an evaluation reads. */
const changeHealthConfig = (holder: PoolClient, vehicleId: string) =>
  holder.query(`UPDATE vehicles SET health_config = '{"battery": {"lowVolts": 11.8}}' WHERE id = $1`, [vehicleId]);

async function healthOf(vehicleId: string) {
  const { rows } = await t.pool.query(
    `SELECT v.health, s.vehicle_id IS NOT NULL AS "hasState"
     FROM vehicles v LEFT JOIN vehicle_health_state s ON s.vehicle_id = v.id WHERE v.id = $1`,
    [vehicleId],
  );
  return {
    alerts: (rows[0].health.alerts as Array<{ type: string }>).map((a) => a.type),
    hasState: rows[0].hasState as boolean,
  };
}

describe('an evaluation locked only to write', () => {
  it('reads while an ingest batch holds the vehicle and writes after it, ingest’s own writes not counting as moved', async () => {
    const id = await vehicleWithNewCode('to-write-1');
    const summary = await evaluateWhileHeld(
      id,
      () => evaluate(id, 'to-write'),
      // What an ingest batch writes: the latest state of other signals, as_of, updated_at.
      (holder) =>
        holder.query(
          `UPDATE vehicles SET signals = signals || '{"fuel_percent": 55}'::jsonb, as_of = $2, updated_at = clock_timestamp()
           WHERE id = $1`,
          [id, now],
        ),
    );
    expect(summary).toMatchObject({ moved: false, evaluated: 1, changed: [id] });
    expect(await healthOf(id)).toEqual({ alerts: ['abs_warning'], hasState: true });
    const { rows } = await t.pool.query(`SELECT signals -> 'fuel_percent' AS fuel FROM vehicles WHERE id = $1`, [id]);
    expect(rows[0].fuel).toBe(55);
  });

  it('writes nothing when the vehicle’s health inputs moved meanwhile (an integrator’s health config)', async () => {
    const id = await vehicleWithNewCode('to-write-2');
    const summary = await evaluateWhileHeld(
      id,
      () => evaluate(id, 'to-write'),
      (holder) => changeHealthConfig(holder, id),
    );
    expect(summary).toMatchObject({ moved: true, evaluated: 0, changed: [] });
    expect(await healthOf(id)).toEqual({ alerts: [], hasState: false });
    // Again with the vehicle locked throughout: the new inputs are read and the result written.
    expect(await evaluate(id, 'first')).toMatchObject({ moved: false, evaluated: 1, changed: [id] });
    expect(await healthOf(id)).toEqual({ alerts: ['abs_warning'], hasState: true });
  });

  it('writes nothing when its state row moved meanwhile (another evaluation wrote it)', async () => {
    const id = await vehicleWithNewCode('to-write-3');
    const summary = await evaluateWhileHeld(
      id,
      () => evaluate(id, 'to-write'),
      (holder) =>
        holder.query(
          `INSERT INTO vehicle_health_state (vehicle_id, fed_through, state, evaluated_at) VALUES ($1, '{}', '{}', $2)`,
          [id, now],
        ),
    );
    expect(summary).toMatchObject({ moved: true, evaluated: 0 });
    expect(await healthOf(id)).toEqual({ alerts: [], hasState: true });
  });

  it('writes nothing for a vehicle deactivated meanwhile, and the second try finds nothing to evaluate', async () => {
    const id = await vehicleWithNewCode('to-write-4');
    const summary = await evaluateWhileHeld(
      id,
      () => evaluate(id, 'to-write'),
      (holder) => holder.query(`UPDATE vehicles SET active = false WHERE id = $1`, [id]),
    );
    expect(summary).toMatchObject({ moved: true, evaluated: 0 });
    expect(await evaluate(id, 'first')).toMatchObject({ moved: false, evaluated: 0 });
    expect(await healthOf(id)).toEqual({ alerts: [], hasState: false });
  });
});

describe('the health.evaluate job', () => {
  const handlers = () =>
    healthHandlers({
      config: t.config,
      pool: t.pool,
      log: createLogger('silent'),
      metrics: createMetrics('test'),
      queues: t.queues,
      now: () => now,
    });

  it('writes at the first try when nothing but ingest moved', async () => {
    const id = await vehicleWithNewCode('job-1');
    const result = await handlers()['health.evaluate']({ vehicleId: id, cascade: true }, undefined as never);
    expect(result).toMatchObject({ vehicleId: id, changed: true, lockedThroughout: false });
    expect(await healthOf(id)).toEqual({ alerts: ['abs_warning'], hasState: true });
  });

  it('evaluates again with the vehicle locked throughout when what it read moved', async () => {
    const id = await vehicleWithNewCode('job-2');
    const result = await evaluateWhileHeld(
      id,
      () => handlers()['health.evaluate']({ vehicleId: id, cascade: true }, undefined as never),
      (holder) => changeHealthConfig(holder, id),
    );
    expect(result).toMatchObject({ vehicleId: id, changed: true, lockedThroughout: true });
    expect(await healthOf(id)).toEqual({ alerts: ['abs_warning'], hasState: true });
  });
});
