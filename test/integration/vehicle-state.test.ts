import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeLatestState } from '../../src/db/vehicle-state.js';
import type { LatestSample } from '../../src/domain/sample.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let companyId: string;

const at = (minute: number) => new Date(Date.UTC(2026, 10, 20, 10, minute));
const iso = (minute: number) => at(minute).toISOString();

beforeAll(async () => {
  t = await createTestApp();
  companyId = (await t.createCompany()).id;
});
afterAll(() => t.close());

async function newVehicle(): Promise<string> {
  const { rows } = await t.pool.query<{ id: string }>(
    `INSERT INTO vehicles (company_id, name, created_at) VALUES ($1, 'V', $2) RETURNING id`,
    [companyId, at(0)],
  );
  return rows[0]!.id;
}

async function row(id: string) {
  const { rows } = await t.pool.query(
    `SELECT signals, odometer_values AS "odometerValues", as_of AS "asOf", ecu_odometer_at AS "ecuOdometerAt",
            updated_at AS "updatedAt"
     FROM vehicles WHERE id = $1`,
    [id],
  );
  return rows[0];
}

function sample(vehicleId: string, signal: string, minute: number, value: unknown, source = 'samsara'): LatestSample {
  return { vehicleId, signal, recordedAt: at(minute), value, source };
}

describe('writeLatestState', () => {
  it('sets scalars by value, objects with as_of, every time under observed_at, manual odometers only', async () => {
    const v1 = await newVehicle();
    const v2 = await newVehicle();
    const changed = await writeLatestState(t.pool, [
      sample(v1, 'fuel_percent', 1, 62),
      sample(v1, 'location', 2, { lat: 41.8, lon: -87.6, heading: 90 }),
      sample(v1, 'dtcs', 2, [{ code: 'P0420', system: 'powertrain', mil: true }]),
      sample(v1, 'odometer_km', 3, 1000),
      sample(v1, 'gps_odometer_km', 4, 1001.5),
      sample(v2, 'odometer_km', 5, 50, 'manual'),
    ]);
    expect(changed.sort()).toEqual([v1, v2].sort());
    expect(await row(v1)).toMatchObject({
      signals: {
        fuel_percent: 62,
        location: { lat: 41.8, lon: -87.6, heading: 90, as_of: iso(2) },
        dtcs: [{ code: 'P0420', system: 'powertrain', mil: true }],
        observed_at: {
          fuel_percent: iso(1),
          location: iso(2),
          dtcs: iso(2),
          odometer_km: iso(3),
          gps_odometer_km: iso(4),
        },
      },
      // Provider odometers reach the read model through the health stage only.
      odometerValues: { odometer_km: 1000, gps_odometer_km: 1001.5 },
      asOf: at(4),
      ecuOdometerAt: at(3),
    });
    expect((await row(v1)).signals.odometer).toBeUndefined();
    expect(await row(v2)).toMatchObject({
      signals: { observed_at: { odometer_km: iso(5) }, odometer: { km: 50, as_of: iso(5), source: 'manual' } },
      odometerValues: { odometer_km: 50 },
      asOf: at(5),
      // A manual reading is no ECU odometer.
      ecuOdometerAt: null,
    });
  });

  it('keeps the newer sample per signal whatever order batches come in; a replay changes nothing', async () => {
    const v = await newVehicle();
    await writeLatestState(t.pool, [sample(v, 'fuel_percent', 5, 62), sample(v, 'odometer_km', 5, 1000)]);
    const before = await row(v);
    // Older samples (out of order) and the same samples again (a replay): nothing moves.
    expect(
      await writeLatestState(t.pool, [sample(v, 'fuel_percent', 4, 10), sample(v, 'odometer_km', 4, 900)]),
    ).toEqual([]);
    expect(
      await writeLatestState(t.pool, [sample(v, 'fuel_percent', 5, 62), sample(v, 'odometer_km', 5, 1000)]),
    ).toEqual([]);
    expect(await row(v)).toEqual(before);
    // One signal newer, the other older, in one batch: only the newer one is written.
    expect(
      await writeLatestState(t.pool, [sample(v, 'fuel_percent', 6, 55), sample(v, 'odometer_km', 4, 900)]),
    ).toEqual([v]);
    expect(await row(v)).toMatchObject({
      signals: { fuel_percent: 55, observed_at: { fuel_percent: iso(6), odometer_km: iso(5) } },
      odometerValues: { odometer_km: 1000 },
      asOf: at(6),
    });
  });

  it('moves updated_at only when a value changed, objects compared without their as_of', async () => {
    const v = await newVehicle();
    const location = { lat: 41.8, lon: -87.6, heading: 90 };
    await writeLatestState(t.pool, [sample(v, 'location', 1, location), sample(v, 'odometer_km', 1, 1000)]);
    const first = await row(v);
    // The same values, later: the times move, updated_at does not.
    expect(
      await writeLatestState(t.pool, [sample(v, 'location', 2, location), sample(v, 'odometer_km', 2, 1000)]),
    ).toEqual([v]);
    const repeated = await row(v);
    expect(repeated.updatedAt).toEqual(first.updatedAt);
    expect(repeated.signals.location.as_of).toBe(iso(2));
    expect(repeated.signals.observed_at.odometer_km).toBe(iso(2));
    // An odometer series' value changed: updated_at moves.
    await writeLatestState(t.pool, [sample(v, 'odometer_km', 3, 1001)]);
    const moved = await row(v);
    expect(moved.updatedAt.getTime()).toBeGreaterThan(repeated.updatedAt.getTime());
    // An object's value changed: updated_at moves again.
    await writeLatestState(t.pool, [sample(v, 'location', 4, { ...location, heading: 180 })]);
    expect((await row(v)).updatedAt.getTime()).toBeGreaterThan(moved.updatedAt.getTime());
  });

  it("never makes a sample of a previous owner's span the latest state, except the odometer", async () => {
    const v = await newVehicle();
    await t.pool.query(
      `INSERT INTO vehicle_ownerships (vehicle_id, company_id, started_at, ended_at) VALUES ($1, $2, $3, $4)`,
      [v, companyId, at(0), at(10)],
    );
    await writeLatestState(t.pool, [sample(v, 'fuel_percent', 5, 62), sample(v, 'odometer_km', 5, 1000)]);
    expect(await row(v)).toMatchObject({
      signals: { observed_at: { odometer_km: iso(5) } },
      odometerValues: { odometer_km: 1000 },
    });
    expect((await row(v)).signals.fuel_percent).toBeUndefined();
  });

  it('compares with a span that began between two milliseconds exactly', async () => {
    const v = await newVehicle();
    // The previous owner's span ended 250 µs after minute 10: a sample at minute 10 is still theirs.
    await t.pool.query(
      `INSERT INTO vehicle_ownerships (vehicle_id, company_id, started_at, ended_at)
       VALUES ($1, $2, $3, $4::timestamptz + interval '250 microseconds')`,
      [v, companyId, at(0), at(10)],
    );
    expect(await writeLatestState(t.pool, [sample(v, 'fuel_percent', 10, 62)])).toEqual([]);
    expect((await row(v)).signals.fuel_percent).toBeUndefined();
    const firstOwnMs = {
      vehicleId: v,
      signal: 'fuel_percent',
      recordedAt: new Date(at(10).getTime() + 1),
      value: 63,
      source: 'samsara',
    };
    expect(await writeLatestState(t.pool, [firstOwnMs])).toEqual([v]);
    expect((await row(v)).signals.fuel_percent).toBe(63);
  });
});
