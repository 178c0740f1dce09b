import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createConnection, pushGeneric, settle } from '../helpers/ingest.js';

let t: TestApp;
let acme: { id: string; key: string };
let connection: { id: string; secret: string };
let clock = new Date('2026-11-22T12:00:00Z');
let nextVehicle = 0;

beforeAll(async () => {
  t = await createTestApp({}, () => clock);
  acme = await t.createCompany();
  const created = await createConnection(t, acme.id, 'generic');
  connection = { id: created.id, secret: created.generated_secret! };
  await t.startWorkers(['ingest', 'health'], () => clock);
});
afterAll(() => t.close());

async function trackedVehicle(extra: Record<string, unknown> = {}) {
  const providerVehicleId = `v-${++nextVehicle}`;
  const vehicle = await t.createVehicle(acme.id, {
    provider_connection_id: connection.id,
    provider_vehicle_id: providerVehicleId,
    ...extra,
  });
  return { id: vehicle.id as string, providerVehicleId };
}

async function push(vehicle: string, readings: Array<[string, Record<string, unknown>]>) {
  const response = await pushGeneric(t, 'generic', connection.id, connection.secret, {
    readings: readings.map(([ts, signals]) => ({ vehicle, ts, signals })),
  });
  expect(response.statusCode).toBe(202);
  await settle(t);
}

async function view(id: string) {
  return (await t.api('GET', `/vehicles/${id}`, acme.key)).json().data;
}

async function sweep() {
  const job = await t.queues.add('health.sweep', {});
  await expect
    .poll(async () => (await t.queues.queue('health').getJob(job.id!))?.finishedOn ?? null, { timeout: 20_000 })
    .not.toBeNull();
}

async function healthEvents(vehicleId: string) {
  const { rows } = await t.pool.query(`SELECT kind, payload FROM health_events WHERE vehicle_id = $1 ORDER BY id`, [
    vehicleId,
  ]);
  return rows as Array<{ kind: string; payload: Record<string, unknown> }>;
}

describe('signal alerts through the real ingest path', () => {
  it('a battery below 12.2 V with the engine off for over 2 minutes raises one medium alert; recovery clears it', async () => {
    const v = await trackedVehicle();
    await push(v.providerVehicleId, [
      ['2026-11-22T10:00:00Z', { odometer_km: 50_000, engine_state: 'off', battery_voltage: 12.1 }],
      ['2026-11-22T10:01:00Z', { battery_voltage: 12.15 }],
      ['2026-11-22T10:02:30Z', { battery_voltage: 12.1 }],
    ]);
    const low = await view(v.id);
    expect(low.health).toEqual({
      status: 'needs_attention',
      alerts: [
        expect.objectContaining({
          severity: 'medium',
          type: 'battery_voltage_low',
          due_date: null,
          due_miles_remaining: null,
        }),
      ],
    });
    expect(low.link_broken).toBeNull();
    expect(low.signals.odometer).toMatchObject({ km: 50_000, source: 'generic' });
    const kinds = (await healthEvents(v.id)).map((e) => e.kind);
    expect(kinds).toContain('alert_opened');
    expect(kinds).toContain('status_changed');

    // Flapping around the threshold does not reopen it; a sustained recovery clears it.
    await push(v.providerVehicleId, [
      ['2026-11-22T10:03:00Z', { battery_voltage: 12.3 }],
      ['2026-11-22T10:03:30Z', { battery_voltage: 12.15 }],
      ['2026-11-22T10:04:00Z', { battery_voltage: 12.6 }],
      ['2026-11-22T10:07:00Z', { battery_voltage: 12.7 }],
    ]);
    const recovered = await view(v.id);
    expect(recovered.health).toEqual({ status: 'ok', alerts: [] });
    const opened = (await healthEvents(v.id)).filter(
      (e) => e.kind === 'alert_opened' && e.payload.type === 'battery_voltage_low',
    );
    expect(opened).toHaveLength(1);
  });

  it('a red-stop coolant temperature is critical; ABS codes are high and make the vehicle critical', async () => {
    const v = await trackedVehicle();
    await push(v.providerVehicleId, [
      [
        '2026-11-22T10:00:00Z',
        { odometer_km: 1000, engine_state: 'on', coolant_temp_c: 90, dtcs: [{ code: 'C0035' }] },
      ],
      ['2026-11-22T10:00:30Z', { coolant_temp_c: 113 }],
    ]);
    const vehicle = await view(v.id);
    expect(vehicle.health.status).toBe('critical');
    expect(
      vehicle.health.alerts.map((a: { type: string; severity: string }) => `${a.type}:${a.severity}`).sort(),
    ).toEqual(['abs_warning:high', 'coolant_temperature_high:critical']);
  });
});

describe('link_broken', () => {
  it('no_reading before the tracker reports an odometer, null after, null for a manually tracked vehicle', async () => {
    const v = await trackedVehicle();
    const before = await view(v.id);
    expect(before.link_broken).toEqual({ reason: 'no_reading', since: null, tracker_km: null });
    await push(v.providerVehicleId, [['2026-11-22T11:00:00Z', { odometer_km: 20_000, fuel_percent: 50 }]]);
    expect((await view(v.id)).link_broken).toBeNull();
    const manual = await t.createVehicle(acme.id);
    expect((await view(manual.id)).link_broken).toBeNull();
  });

  it('conflict when the tracker runs far backwards; the conflicting reading never becomes the odometer; a manual reading re-anchors', async () => {
    const v = await trackedVehicle();
    await push(v.providerVehicleId, [
      ['2026-11-22T09:00:00Z', { odometer_km: 80_000 }],
      ['2026-11-22T09:30:00Z', { odometer_km: 80_030 }],
    ]);
    await push(v.providerVehicleId, [['2026-11-22T10:00:00Z', { odometer_km: 75_040 }]]);
    const conflicted = await view(v.id);
    expect(conflicted.link_broken).toEqual({
      reason: 'conflict',
      since: '2026-11-22T09:30:00.000Z',
      tracker_km: 75_040,
    });
    expect(conflicted.signals.odometer).toMatchObject({ km: 80_030, as_of: '2026-11-22T09:30:00.000Z' });
    expect(conflicted.health.status).toBe('needs_attention');

    // The tracker keeps counting from its lower base: still a conflict.
    await push(v.providerVehicleId, [['2026-11-22T10:30:00Z', { odometer_km: 75_070 }]]);
    expect((await view(v.id)).link_broken).toMatchObject({ reason: 'conflict', tracker_km: 75_070 });

    // A person reads the dashboard (the tracker was wrong): the manual reading is the new anchor
    // and clears the conflict, until the tracker contradicts it again.
    clock = new Date('2026-11-22T11:00:00Z');
    const put = await t.api('PUT', `/vehicles/${v.id}`, acme.key, { odometer_miles: 80_100 / 1.609344 });
    expect(put.statusCode).toBe(200);
    await settle(t);
    const anchored = await view(v.id);
    expect(anchored.link_broken).toBeNull();
    expect(anchored.signals.odometer).toMatchObject({ km: 80_100, source: 'manual' });
    await push(v.providerVehicleId, [['2026-11-22T11:10:00Z', { odometer_km: 75_100 }]]);
    expect((await view(v.id)).link_broken).toMatchObject({ reason: 'conflict', tracker_km: 75_100 });

    // The tracker is recalibrated: two consistent readings clear the conflict and it is trusted again.
    await push(v.providerVehicleId, [
      ['2026-11-22T11:30:00Z', { odometer_km: 80_150 }],
      ['2026-11-22T11:45:00Z', { odometer_km: 80_160 }],
    ]);
    const fixed = await view(v.id);
    expect(fixed.link_broken).toBeNull();
    expect(fixed.signals.odometer).toMatchObject({ km: 80_160, source: 'generic' });
    clock = new Date('2026-11-22T12:00:00Z');
  });

  it('turns stale through the sweep alone when the tracker stops reporting, and the change reaches updated_since pollers once', async () => {
    const v = await trackedVehicle();
    await push(v.providerVehicleId, [['2026-11-22T11:00:00Z', { odometer_km: 10_000 }]]);
    const fresh = await view(v.id);
    expect(fresh.link_broken).toBeNull();

    clock = new Date('2026-11-29T11:00:01Z');
    await sweep();
    const stale = await view(v.id);
    expect(stale.link_broken).toEqual({ reason: 'stale', since: '2026-11-22T11:00:00.000Z', tracker_km: null });
    expect(Date.parse(stale.updated_at)).toBeGreaterThan(Date.parse(fresh.updated_at));
    const polled = (
      await t.api('GET', `/vehicles?updated_since=${encodeURIComponent(stale.updated_at)}&limit=200`, acme.key)
    ).json().data;
    expect(polled.map((x: { id: string }) => x.id)).toContain(v.id);

    // Nothing changed since: another sweep leaves updated_at alone.
    await sweep();
    expect((await view(v.id)).updated_at).toBe(stale.updated_at);
    clock = new Date('2026-11-22T12:00:00Z');
  });
});

describe('maintenance', () => {
  it('oil change due from the last service entry, with miles remaining and an operator override of the interval', async () => {
    const v = await trackedVehicle();
    await push(v.providerVehicleId, [['2026-11-22T08:00:00Z', { odometer_km: 16_093.44 }]]); // 10,000 mi
    const entry = await t.admin('POST', `/vehicles/${v.id}/service-entries`, {
      type: 'oil_change',
      performed_at: '2026-10-01T00:00:00Z',
      odometer_miles: 5_300,
    });
    expect(entry.statusCode).toBe(201);
    await settle(t);
    const due = (await view(v.id)).health.alerts.find((a: { type: string }) => a.type === 'oil_change');
    expect(due).toMatchObject({ type: 'oil_change', severity: 'low', due_miles_remaining: 300 });

    const override = await t.admin('PUT', `/vehicles/${v.id}/health-config`, {
      maintenance: { oil_change: { intervalMiles: 10_000 } },
    });
    expect(override.statusCode).toBe(200);
    expect(override.json().data.effective.maintenance.oil_change).toMatchObject({
      intervalMiles: 10_000,
      intervalMonths: 6,
    });
    await settle(t);
    expect((await view(v.id)).health.alerts.find((a: { type: string }) => a.type === 'oil_change')).toBeUndefined();
    expect(
      (await t.admin('PUT', `/vehicles/${v.id}/health-config`, { battery: { restingLowVolts: 'low' } })).statusCode,
    ).toBe(400);
  });
});

describe('maintenance from completed runs', () => {
  it("a completed run's oil change restarts the interval at once; reopening the run takes it back", async () => {
    const v = await trackedVehicle();
    await push(v.providerVehicleId, [['2026-11-22T08:00:00Z', { odometer_km: 16_093.44 }]]); // 10,000 mi
    await t.admin('POST', `/vehicles/${v.id}/service-entries`, {
      type: 'oil_change',
      performed_at: '2026-10-01T00:00:00Z',
      odometer_miles: 5_300,
    });
    await settle(t);
    const oilAlert = async () =>
      (await view(v.id)).health.alerts.find((a: { type: string }) => a.type === 'oil_change');
    expect(await oilAlert()).toMatchObject({ due_miles_remaining: 300 });

    const request = await t.admin('POST', `/companies/${acme.id}/service-requests`, {
      vehicle_id: v.id,
      items: [{ title: 'Oil change', type: 'oil_change' }],
    });
    const runId = request.json().data.run.id as string;
    expect((await t.admin('POST', `/runs/${runId}/complete`)).statusCode).toBe(200);
    await settle(t);
    expect(await oilAlert()).toBeUndefined();

    expect((await t.admin('POST', `/runs/${runId}/reopen`)).statusCode).toBe(200);
    await settle(t);
    expect(await oilAlert()).toMatchObject({ due_miles_remaining: 300 });
  });
});

describe('cascade', () => {
  it('an evaluation with cascade false updates the vehicle state but emits no health events', async () => {
    const v = await trackedVehicle();
    await t.queues.add('health.evaluate', { vehicleId: v.id, cascade: false });
    await settle(t);
    expect((await view(v.id)).link_broken).toEqual({ reason: 'no_reading', since: null, tracker_km: null });
    expect(await healthEvents(v.id)).toEqual([]);
  });
});
