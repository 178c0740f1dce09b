import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hmacHex } from '../../providers/signing.js';
import { enqueueHealthEvaluations } from '../../src/queue/enqueue-health.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { startFakeProvider, type FakeProvider } from '../helpers/fake-provider.js';
import { createConnection, drainInbox, settle } from '../helpers/ingest.js';
import { v1 } from '../helpers/monitoring.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

let t: TestApp;
let samsaraApi: FakeProvider;
let receiver: Receiver;
let acme: { id: string; key: string };
let samsaraConnection: { id: string };

/** Provider vehicle ids whose snapshot shows a running engine at 115 °C (a critical coolant alert), taken now. */
const overheating = new Set<string>();
/**
 * When the other snapshots were taken: an hour before the run, the same in every pull. Relative to
 * the run, never a fixed date: a snapshot over 7 days old breaks the vehicle's link as stale.
 */
const anHourBefore = new Date(Date.now() - 3_600_000).toISOString();

const snapshot = (vehicleId: string) => {
  const hot = overheating.has(vehicleId);
  const time = hot ? new Date().toISOString() : anHourBefore;
  return {
    data: [
      {
        id: vehicleId,
        name: 'Truck',
        obdOdometerMeters: { time, value: 200_000_000 },
        fuelPercent: { time, value: 40 },
        ...(hot
          ? {
              engineState: { time, value: 'On' },
              engineCoolantTemperatureMilliC: { time, value: 115_000 },
            }
          : {}),
      },
    ],
    pagination: { endCursor: '', hasNextPage: false },
  };
};
let nextVehicle = 0;
const samsaraVehicle = (body: Record<string, unknown> = {}) =>
  t.createVehicle(acme.id, {
    provider_connection_id: samsaraConnection.id,
    provider_vehicle_id: `sam-${++nextVehicle}`,
    ...body,
  });

beforeAll(async () => {
  t = await createTestApp({ WEBHOOK_ALLOW_NETS: '127.0.0.1/32' });
  samsaraApi = await startFakeProvider();
  receiver = await startReceiver();
  samsaraApi.on('GET /fleet/vehicles/stats', (request) => ({ body: snapshot(request.query.get('vehicleIds') ?? '') }));
  acme = await t.createCompany();
  samsaraConnection = await createConnection(t, acme.id, 'samsara', {
    webhook_secret: Buffer.from('samsara-secret').toString('base64'),
    api_token: 'tok',
    base_url: samsaraApi.url,
  });
});
afterAll(async () => {
  await t.close();
  await samsaraApi.close();
  await receiver.close();
});

async function refresh(vehicleId: string, key = acme.key, body?: unknown) {
  return t.api('POST', `/vehicles/${vehicleId}/refresh`, key, body);
}

describe('POST /vehicles/{id}/refresh', () => {
  it('coalesces concurrent refreshes of one vehicle while queued', async () => {
    const truck = await samsaraVehicle();
    const first = await refresh(truck.id);
    const second = await refresh(truck.id, acme.key, { cascade: true });
    expect(first.statusCode).toBe(200);
    expect(first.json().data).toEqual({
      refresh_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      provider: 'samsara',
      status: 'queued',
      cascade: true,
    });
    expect(second.json().data.refresh_id).toBe(first.json().data.refresh_id);
  });

  it('a refresh asked with cascade never joins a queued one without it, nor the other way round', async () => {
    const truck = await samsaraVehicle();
    const plain = (await refresh(truck.id, acme.key, { cascade: false })).json().data;
    const cascading = (await refresh(truck.id, acme.key, { cascade: true })).json().data;
    expect(plain.cascade).toBe(false);
    expect(cascading.cascade).toBe(true);
    expect(cascading.refresh_id).not.toBe(plain.refresh_id);
    // Each coalesces with the queued refresh of its own kind.
    expect((await refresh(truck.id)).json().data).toEqual(cascading);
    expect((await refresh(truck.id, acme.key, { cascade: false })).json().data).toEqual(plain);

    // And each runs as answered: the pulled pages carry their refresh's cascade flag.
    const workers = await t.startWorkers(['pull']);
    const pulled = async () =>
      (
        await t.pool.query(`SELECT refresh_id, cascade FROM ingest_inbox WHERE refresh_id = ANY($1::uuid[])`, [
          [plain.refresh_id, cascading.refresh_id],
        ])
      ).rows.sort((a, b) => Number(a.cascade) - Number(b.cascade));
    await expect.poll(pulled, { timeout: 10_000 }).toEqual([
      { refresh_id: plain.refresh_id, cascade: false },
      { refresh_id: cascading.refresh_id, cascade: true },
    ]);
    await workers.close();
  });

  it('pulls the vehicle now, carrying the refresh id and cascade flag through the pipeline', async () => {
    const truck = await samsaraVehicle();
    const workers = await t.startWorkers(['pull', 'ingest', 'health']);
    const healthEvents = async (vehicleId: string) =>
      (
        await t.pool.query(`SELECT kind, payload FROM health_events WHERE vehicle_id = $1 ORDER BY id`, [vehicleId])
      ).rows.map((r) => [r.kind, r.payload.to]);
    // Whatever the workers' start-up sweep evaluated is done first.
    await settle(t);
    const before = await healthEvents(truck.id);
    const { refresh_id: refreshId, cascade } = (await refresh(truck.id, acme.key, { cascade: false })).json().data;
    expect(cascade).toBe(false);
    await expect
      .poll(
        async () =>
          (await t.pool.query(`SELECT count(*)::int AS n FROM ingest_inbox WHERE refresh_id = $1`, [refreshId])).rows[0]
            .n,
        { timeout: 10_000 },
      )
      .toBe(1);
    await settle(t);
    const { rows } = await t.pool.query(`SELECT cascade, provider FROM ingest_inbox WHERE refresh_id = $1`, [
      refreshId,
    ]);
    expect(rows[0]).toEqual({ cascade: false, provider: 'samsara' });
    const vehicle = (await t.api('GET', `/vehicles/${truck.id}`, acme.key)).json().data;
    expect(vehicle.signals).toMatchObject({ fuel_percent: 40, odometer: { km: 200_000, source: 'samsara' } });
    const request = samsaraApi.requests.find((r) => r.path === '/fleet/vehicles/stats');
    expect(request?.headers.authorization).toBe('Bearer tok');
    // cascade false stops after the vehicle state: the link follows the new odometer, health is not
    // judged again and no health event is written.
    expect(vehicle.link_broken).toBeNull();
    expect(vehicle.health.status).toBe('unknown');
    expect(await healthEvents(truck.id)).toEqual(before);
    // The same pull with cascade (the default) emits the changes it makes.
    const other = await samsaraVehicle();
    await settle(t);
    const otherBefore = await healthEvents(other.id);
    expect((await refresh(other.id)).json().data.cascade).toBe(true);
    await expect
      .poll(() => healthEvents(other.id), { timeout: 10_000 })
      .toEqual([...otherBefore, ['status_changed', 'ok']]);
    await workers.close();
  });

  it('cascade false moves the vehicle state and nothing downstream: no alert, run or monitoring event, then or later', async () => {
    const workers = await t.startWorkers(['pull', 'ingest', 'health', 'runs', 'webhooks']);
    await settle(t);
    /** A vehicle running at 115 °C, watched by a basic subscription for coolant_temperature_high. */
    const overheatingTruck = async () => {
      const truck = await samsaraVehicle();
      overheating.add(truck.provider_vehicle_id);
      const subscription = await v1(t, 'POST', '/runs/subscribe', acme.key, {
        vehicle_id: truck.id,
        webhook_url: `${receiver.url}/hooks/${truck.id}`,
        tier: 'basic',
        events: ['coolant_temperature_high'],
      });
      expect(subscription.statusCode, subscription.body).toBe(201);
      return { id: truck.id as string, subscriptionId: subscription.json().data.id as string };
    };
    const downstream = async (vehicleId: string, subscriptionId: string) => {
      const { rows } = await t.pool.query(
        // Alert events, and status changes to critical (what runs are opened for).
        `SELECT (SELECT count(*)::int FROM health_events WHERE vehicle_id = $1
                   AND (kind LIKE 'alert_%' OR payload ->> 'to' = 'critical')) AS alert_events,
                (SELECT count(*)::int FROM runs WHERE vehicle_id = $1) AS runs,
                (SELECT count(*)::int FROM monitoring_events WHERE subscription_id = $2) AS monitoring_events`,
        [vehicleId, subscriptionId],
      );
      return { ...rows[0], deliveries: receiver.received.filter((r) => r.path === `/hooks/${vehicleId}`).length };
    };
    const refreshed = async (vehicleId: string, cascade: boolean) => {
      const { refresh_id: refreshId } = (await refresh(vehicleId, acme.key, { cascade })).json().data;
      await expect
        .poll(
          async () =>
            (
              await t.pool.query(
                `SELECT count(*)::int AS n FROM ingest_inbox WHERE refresh_id = $1 AND processed_at IS NOT NULL`,
                [refreshId],
              )
            ).rows[0].n,
          { timeout: 10_000 },
        )
        .toBe(1);
      await settle(t);
      return (await t.api('GET', `/vehicles/${vehicleId}`, acme.key)).json().data;
    };

    const quiet = await overheatingTruck();
    await settle(t);
    const before = await downstream(quiet.id, quiet.subscriptionId);
    const vehicle = await refreshed(quiet.id, false);
    // The vehicle state moved: latest signals, the odometer, the link.
    expect(vehicle.signals).toMatchObject({ coolant_temp_c: 115, engine_state: 'on', odometer: { km: 200_000 } });
    expect(vehicle.link_broken).toBeNull();
    // Nothing downstream: no alert, no health event, no run, no monitoring event or delivery.
    expect(vehicle.health.alerts).toEqual([]);
    expect(await downstream(quiet.id, quiet.subscriptionId)).toEqual(before);
    // The samples it passed over never fire later: the next evaluation with cascade reads nothing new
    // (it judges the status again from the link and the alerts it has: unknown becomes ok).
    await enqueueHealthEvaluations(t.queues, [quiet.id], true);
    await settle(t);
    expect((await t.api('GET', `/vehicles/${quiet.id}`, acme.key)).json().data.health.alerts).toEqual([]);
    expect(await downstream(quiet.id, quiet.subscriptionId)).toEqual(before);

    // The same pull with cascade: the alert, the run and the monitoring event all follow.
    const loud = await overheatingTruck();
    await settle(t);
    const cascaded = await refreshed(loud.id, true);
    expect(cascaded.health).toMatchObject({
      status: 'critical',
      alerts: [expect.objectContaining({ type: 'coolant_temperature_high', severity: 'critical' })],
    });
    await expect
      .poll(() => downstream(loud.id, loud.subscriptionId), { timeout: 15_000 })
      .toMatchObject({ runs: 1, monitoring_events: 1, deliveries: 1 });
    const kinds = (
      await t.pool.query(`SELECT kind FROM health_events WHERE vehicle_id = $1 ORDER BY id`, [loud.id])
    ).rows.map((r) => r.kind);
    expect(kinds).toEqual(expect.arrayContaining(['alert_opened', 'status_changed']));
    expect(receiver.received.find((r) => r.path === `/hooks/${loud.id}`)?.json.event).toBe('coolant_temperature_high');
    await workers.close();
  });

  it("a push's alerts and monitoring events survive a refresh without cascade, whichever evaluation runs first", async () => {
    // Only ingestion runs at first: both evaluation jobs wait in the health queue, then run in the order chosen.
    const ingest = await t.startWorkers(['pull', 'ingest']);
    /**
     * A Samsara push (cascade): 5 % fuel with the engine running for 4 minutes (a fuel_level_low
     * alert and event), its last reading newer than the refresh's (so the latest state moves).
     */
    const pushLowFuel = async (providerVehicleId: string) => {
      const at = (secondsAgo: number) => new Date(Date.now() - secondsAgo * 1000).toISOString();
      const body = JSON.stringify({
        data: [
          {
            id: providerVehicleId,
            engineStates: [{ time: at(240), value: 'On' }],
            fuelPercents: [
              { time: at(240), value: 5 },
              { time: at(0), value: 5 },
            ],
          },
        ],
      });
      const timestamp = Math.floor(Date.now() / 1000);
      const response = await t.app.inject({
        method: 'POST',
        url: `/ingest/v1/samsara/${samsaraConnection.id}`,
        headers: {
          'content-type': 'application/json',
          'x-samsara-timestamp': String(timestamp),
          'x-samsara-signature': `v1=${hmacHex('sha256', Buffer.from('samsara-secret'), `v1:${timestamp}:${body}`)}`,
        },
        payload: body,
      });
      expect(response.statusCode, response.body).toBe(202);
    };
    const scenario = async (first: 'refresh' | 'push') => {
      // The refresh pulls a running engine at 115 °C: a critical alert and a coolant event, were it evaluated.
      const truck = await samsaraVehicle();
      overheating.add(truck.provider_vehicle_id);
      const subscription = await v1(t, 'POST', '/runs/subscribe', acme.key, {
        vehicle_id: truck.id,
        webhook_url: `${receiver.url}/hooks/${truck.id}`,
        tier: 'premium',
        events: ['coolant_temperature_high', 'fuel_level_low'],
      });
      expect(subscription.statusCode, subscription.body).toBe(201);
      const { refresh_id: refreshId } = (await refresh(truck.id, acme.key, { cascade: false })).json().data;
      await expect
        .poll(
          async () =>
            (
              await t.pool.query(
                `SELECT count(*)::int AS n FROM ingest_inbox WHERE refresh_id = $1 AND processed_at IS NOT NULL`,
                [refreshId],
              )
            ).rows[0].n,
          { timeout: 10_000 },
        )
        .toBe(1);
      await pushLowFuel(truck.provider_vehicle_id);
      await drainInbox(t);
      // Two jobs for the vehicle, one per flag; the one that runs second is held back.
      const health = t.queues.queue('health');
      const jobs = (await health.getJobs(['waiting', 'prioritized'])).filter((job) => job.data.vehicleId === truck.id);
      expect(jobs.map((job) => job.data.cascade).sort()).toEqual([false, true]);
      const second = jobs.find((job) => job.data.cascade === (first === 'refresh'))!;
      await second.remove();
      const downstream = await t.startWorkers(['health', 'runs', 'webhooks']);
      await settle(t);
      await enqueueHealthEvaluations(t.queues, [truck.id], second.data.cascade);
      await settle(t);
      await downstream.close();
      return { truck, subscriptionId: subscription.json().data.id as string };
    };
    const outcome = async (vehicleId: string, subscriptionId: string) => {
      const alerts = await t.pool.query(
        `SELECT payload ->> 'type' AS type FROM health_events WHERE vehicle_id = $1 AND kind = 'alert_opened' ORDER BY id`,
        [vehicleId],
      );
      const events = await t.pool.query(`SELECT kind FROM monitoring_events WHERE subscription_id = $1 ORDER BY id`, [
        subscriptionId,
      ]);
      const vehicle = (await t.api('GET', `/vehicles/${vehicleId}`, acme.key)).json().data;
      return {
        alertsOpened: alerts.rows.map((r) => r.type),
        monitoringEvents: events.rows.map((r) => r.kind),
        alerts: vehicle.health.alerts.map((a: { type: string }) => a.type),
        coolant: vehicle.signals.coolant_temp_c,
      };
    };

    for (const first of ['refresh', 'push'] as const) {
      const { truck, subscriptionId } = await scenario(first);
      // The push's samples are evaluated fully; the refresh's move the vehicle state and report nothing.
      expect(await outcome(truck.id, subscriptionId), `${first} evaluated first`).toEqual({
        alertsOpened: ['fuel_level_low'],
        monitoringEvents: ['fuel_level_low'],
        alerts: ['fuel_level_low'],
        coolant: 115,
      });
      await expect
        .poll(() => receiver.received.filter((r) => r.path === `/hooks/${truck.id}`).map((r) => r.json.event), {
          timeout: 15_000,
        })
        .toEqual(['fuel_level_low']);
    }
    await ingest.close();
  });

  it('400 REFRESH_NOT_SUPPORTED for Traccar and manually tracked vehicles', async () => {
    const traccar = await createConnection(t, acme.id, 'traccar');
    const device = await t.createVehicle(acme.id, { provider_connection_id: traccar.id, provider_vehicle_id: '3582' });
    const manual = await t.createVehicle(acme.id);
    for (const id of [device.id, manual.id]) {
      const response = await refresh(id);
      expect(response.statusCode).toBe(400);
      expect(response.json().error.code).toBe('REFRESH_NOT_SUPPORTED');
    }
  });

  it('501 REFRESH_NOT_IMPLEMENTED for a provider without a pull (generic)', async () => {
    const generic = await createConnection(t, acme.id, 'generic');
    const vehicle = await t.createVehicle(acme.id, { provider_connection_id: generic.id, provider_vehicle_id: 'g-1' });
    const response = await refresh(vehicle.id);
    expect(response.statusCode).toBe(501);
    expect(response.json().error.code).toBe('REFRESH_NOT_IMPLEMENTED');
  });

  it("404 for an unknown vehicle or another company's; 400 for a bad body", async () => {
    const other = await t.createCompany('Other');
    const foreign = await t.createVehicle(other.id);
    for (const id of [foreign.id, '00000000-0000-4000-8000-000000000000', 'x'])
      expect((await refresh(id)).statusCode).toBe(404);
    const truck = await samsaraVehicle();
    expect((await refresh(truck.id, acme.key, { cascade: 'yes' })).statusCode).toBe(400);
    expect((await refresh(truck.id, acme.key, { deep: true })).statusCode).toBe(400);
  });

  it('one provider vehicle id maps to one vehicle per connection', async () => {
    const response = await t.admin('POST', `/companies/${acme.id}/vehicles`, {
      provider_connection_id: samsaraConnection.id,
      provider_vehicle_id: 'sam-1',
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.details.errors[0]).toEqual({
      field: 'provider_vehicle_id',
      message: 'is already mapped to another vehicle of this connection',
    });
  });
});
