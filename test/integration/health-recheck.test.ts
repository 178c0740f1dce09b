/**
 * The sweep passes over vehicles whose health cannot have changed (docs/health.md "The sweep"):
 * each evaluation stores when its result can next change by time alone, and a vehicle is swept
 * then, with a live monitoring subscription, after overrides of its company changed, or in its
 * turn of the hourly full evaluation (which also takes samples an evaluation lost with Redis owed).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listVehiclesToSweep } from '../../src/db/health.js';
import { msPerDay } from '../../src/domain/units.js';
import { sweepHealth } from '../../src/evaluation/evaluate-vehicles.js';
import { fullEvaluationShare, fullEvaluationSweeps, sweepIntervalMs } from '../../src/health/recheck.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let companyId: string;
const now = new Date('2026-11-22T12:00:00Z');
/** The fleet's last odometer reading: the tracker goes stale 7 days later (the default staleDays). */
const lastReadingAt = new Date(now.getTime() - 6.5 * msPerDay);
const staleAt = lastReadingAt.getTime() + 7 * msPerDay + 1;
const vehicles = 12;

/** Which vehicles the sweep at `at` takes. */
async function listed(at: Date): Promise<string[]> {
  const due = await listVehiclesToSweep(t.pool, at, {
    of: fullEvaluationSweeps,
    index: fullEvaluationShare(at.getTime()),
  });
  return due.map((vehicle) => vehicle.id);
}
/** The vehicles outside the share of full evaluations of the sweep at `at`. */
async function outsideShare(at: Date): Promise<string[]> {
  const { rows } = await t.pool.query<{ id: string }>(
    `SELECT id FROM vehicles WHERE get_byte(uuid_send(id), 15) % $1 <> $2 ORDER BY id`,
    [fullEvaluationSweeps, fullEvaluationShare(at.getTime())],
  );
  return rows.map((r) => r.id);
}
/** Marks a vehicle's battery reading newer than anything fed (an evaluation owed and lost). */
async function unfedSample(vehicleId: string, at: Date): Promise<void> {
  await t.pool.query(
    `UPDATE vehicles SET signals = jsonb_set(signals, '{observed_at,battery_voltage}', to_jsonb($2::text)) WHERE id = $1`,
    [vehicleId, at.toISOString()],
  );
}

beforeAll(async () => {
  t = await createTestApp();
  companyId = (await t.createCompany()).id;
  await t.pool.query(
    `INSERT INTO vehicles (company_id, name, telematics_provider, provider_vehicle_id, created_at)
     SELECT $1, 'V' || i, 'samsara', 'sam-' || i, $2::timestamptz - interval '400 days' FROM generate_series(1, $3) AS i`,
    [companyId, now, vehicles],
  );
  await t.pool.query(
    `INSERT INTO readings (vehicle_id, signal, recorded_at, value_num, source)
     SELECT id, 'odometer_km', $2, 50000, 'samsara' FROM vehicles WHERE company_id = $1`,
    [companyId, lastReadingAt],
  );
  await t.pool.query(
    `UPDATE vehicles SET signals = jsonb_build_object('observed_at', jsonb_build_object('odometer_km', $2::text)),
                         odometer_values = '{"odometer_km": 50000}'
     WHERE company_id = $1`,
    [companyId, lastReadingAt.toISOString()],
  );
  expect((await sweepHealth(t.pool, () => now, 2)).evaluated).toBe(vehicles);
});
afterAll(() => t.close());

describe('the sweep evaluates only vehicles whose health can have changed', () => {
  it('stores when the result can next change by time alone', async () => {
    const { rows } = await t.pool.query<{ recheckAt: Date }>(
      `SELECT DISTINCT recheck_at AS "recheckAt" FROM vehicle_health_state`,
    );
    expect(rows.map((r) => r.recheckAt.getTime())).toEqual([staleAt]);
  });

  it('passes over a vehicle until its recheck time, then evaluates it and its link goes stale', async () => {
    const before = new Date(staleAt - 60_000);
    const skipped = await outsideShare(before);
    expect(skipped.length).toBeGreaterThan(0);
    const taken = await listed(before);
    for (const id of skipped) expect(taken).not.toContain(id);
    expect(taken.length).toBe(vehicles - skipped.length);

    const after = new Date(staleAt + 60_000);
    expect((await listed(after)).length).toBe(vehicles);
    const sweep = await sweepHealth(t.pool, () => after, 2);
    expect(sweep).toMatchObject({ evaluated: vehicles, changed: vehicles });
    const { rows } = await t.pool.query<{ reason: string }>(
      `SELECT DISTINCT link_broken ->> 'reason' AS reason FROM vehicles WHERE company_id = $1`,
      [companyId],
    );
    expect(rows).toEqual([{ reason: 'stale' }]);
    // Stale, and no time named before the oldest day leaves the 30-day window: only the hourly turn takes them.
    const later = new Date(staleAt + 2 * msPerDay);
    expect((await listed(later)).sort()).toEqual(
      (await t.pool.query<{ id: string }>(`SELECT id FROM vehicles`)).rows
        .map((r) => r.id)
        .filter((id) => !skippedAt(later, id))
        .sort(),
    );
  });

  it('takes a vehicle with a live monitoring subscription; one with samples not yet fed in its hourly turn', async () => {
    const at = new Date(staleAt + 3 * msPerDay);
    const [unfed, monitored] = await outsideShare(at);
    await unfedSample(unfed!, new Date(staleAt + 2.5 * msPerDay));
    expect(await listed(at)).not.toContain(unfed);
    const turn = [1, 2, 3]
      .map((n) => new Date(at.getTime() + n * sweepIntervalMs))
      .find((time) => !skippedAt(time, unfed!));
    expect(await listed(turn!)).toContain(unfed);
    await t.pool.query(
      `INSERT INTO monitoring_subscriptions (company_id, vehicle_id, webhook_url, events, tier, secret_ciphertext)
       VALUES ($1, $2, 'https://example.com/hook', ARRAY['oil_change_needed'], 'basic', '\\x00')`,
      [companyId, monitored],
    );
    expect(await listed(at)).toContain(monitored);
  });

  it('takes every vehicle of a company whose overrides changed, at the next sweep', async () => {
    const at = new Date(staleAt + 4 * msPerDay);
    const outside = await outsideShare(at);
    const response = await t.admin('PUT', `/companies/${companyId}/health-config`, { link: { staleDays: 30 } });
    expect(response.statusCode).toBe(200);
    const taken = await listed(at);
    for (const id of outside) expect(taken).toContain(id);
    // Evaluated under the new override: no longer stale.
    await sweepHealth(t.pool, () => at, 2);
    const { rows } = await t.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM vehicles WHERE company_id = $1 AND link_broken IS NULL`,
      [companyId],
    );
    expect(rows[0]!.n).toBe(vehicles);
  });
});

/** Whether the vehicle is outside the share of full evaluations of the sweep at `at`. */
function skippedAt(at: Date, vehicleId: string): boolean {
  const lastByte = Number.parseInt(vehicleId.slice(-2), 16);
  return lastByte % fullEvaluationSweeps !== fullEvaluationShare(at.getTime());
}
