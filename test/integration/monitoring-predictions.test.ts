/**
 * "Premium covers all events plus predictions" (docs/monitoring.md) through the real pipeline:
 * signed generic pushes → ingest → health evaluation with the monitoring stage → stored event
 * bodies → deliveries to a real receiver on 127.0.0.1. A premium subscription's body carries the
 * vehicle's forecasts, the same texts as the history report's predictive_insights; basic and
 * standard bodies have no `predictions` key; a retried delivery sends the same bytes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildHistoryReport } from '../../src/history/build-report.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createConnection, pushGeneric, settle } from '../helpers/ingest.js';
import { v1 } from '../helpers/monitoring.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

const vin = '1M8GDM9AXKP042788';
const kmPerMile = 1.609344;
const dayMs = 24 * 3600 * 1000;

let t: TestApp;
let receiver: Receiver;
let acme: { id: string; key: string };
let vehicleId: string;
let connection: { id: string; generated_secret: string | null };
const subscriptions: Record<string, string> = {};

beforeAll(async () => {
  t = await createTestApp({ WEBHOOK_ALLOW_NETS: '127.0.0.1/32', MONITORING_RETRY_DELAYS_MS: '300,300,300' });
  receiver = await startReceiver();
  acme = await t.createCompany();
  connection = await createConnection(t, acme.id, 'generic');
  vehicleId = (
    await t.createVehicle(acme.id, {
      vin,
      provider_connection_id: connection.id,
      provider_vehicle_id: 'p-1',
    })
  ).id;
  // The oil was changed a month ago at 10,000 miles; the interval is 5,000.
  const entry = await t.admin('POST', `/vehicles/${vehicleId}/service-entries`, {
    type: 'oil_change',
    performed_at: new Date(Date.now() - 30 * dayMs).toISOString(),
    odometer_miles: 10_000,
  });
  expect(entry.statusCode, entry.body).toBe(201);
  for (const tier of ['basic', 'standard', 'premium']) {
    const response = await v1(t, 'POST', '/runs/subscribe', acme.key, {
      vehicle_id: vehicleId,
      webhook_url: `${receiver.url}/hooks/${tier}`,
      tier,
      events: ['oil_change_needed'],
    });
    expect(response.statusCode, response.body).toBe(201);
    subscriptions[tier] = response.json().data.id;
  }
  // The premium receiver fails the first attempt: the retry must send the same bytes.
  receiver.answer('/hooks/premium', { status: 500 });
  await t.startWorkers(['ingest', 'health', 'webhooks']);
  // A minute before the vehicle was added: a first owner's readings from before then are its own.
  const ts = new Date(Date.now() - 60_000).toISOString();
  const push = await pushGeneric(t, 'generic', connection.id, connection.generated_secret!, {
    readings: [
      {
        vehicle: 'p-1',
        ts,
        signals: {
          odometer_km: 15_600 * kmPerMile,
          engine_state: 'on',
          battery_voltage: 13.9,
          oil_life_percent: 20,
          brake_lining_percent: 60,
        },
      },
    ],
  });
  expect(push.statusCode, push.body).toBe(202);
  await settle(t);
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

const bodiesTo = (tier: string) => receiver.received.filter((r) => r.path === `/hooks/${tier}`);

describe('predictions in monitoring event bodies', () => {
  it("a premium body carries the vehicle's forecasts: the history report's predictive_insights", async () => {
    await expect.poll(() => bodiesTo('premium').length, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    const [first] = bodiesTo('premium');
    expect(first!.json.event).toBe('oil_change_needed');
    const report = (await buildHistoryReport(t.pool, { vin, tier: 'lifetime', reportId: 'r', now: new Date() }))!;
    expect(first!.json.predictions).toEqual(report.predictive_insights);
    expect(first!.json.predictions).toEqual({
      next_oil_change: expect.stringMatching(/^Oil life 20 %\. Overdue \(600 miles over\); last oil change /),
      brake_replacement: expect.stringMatching(
        /^Brake lining at 60 % on \d{4}-\d{2}-\d{2}; replace at 25 % or below\.$/,
      ),
      battery_health: expect.stringMatching(/^Charging normally: 13\.9 V on \d{4}-\d{2}-\d{2}\.$/),
    });
  });

  it('basic and standard bodies have no predictions key', async () => {
    for (const tier of ['basic', 'standard']) {
      await expect.poll(() => bodiesTo(tier).length, { timeout: 10_000 }).toBe(1);
      const [body] = bodiesTo(tier);
      expect(body!.json.event).toBe('oil_change_needed');
      expect(Object.keys(body!.json)).not.toContain('predictions');
      expect(body!.rawBody.toString('utf8')).not.toContain('predictions');
    }
  });

  it('a retry sends the same bytes with the same signature as the stored body', async () => {
    await expect.poll(() => bodiesTo('premium').length, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    receiver.answer('/hooks/premium', { status: 200 });
    await expect.poll(() => bodiesTo('premium').length, { timeout: 10_000 }).toBe(2);
    const [first, retry] = bodiesTo('premium');
    expect(retry!.rawBody.equals(first!.rawBody)).toBe(true);
    expect(retry!.headers['x-service-signature']).toBe(first!.headers['x-service-signature']);
    const stored = await t.pool.query(`SELECT body FROM monitoring_events WHERE subscription_id = $1`, [
      subscriptions.premium,
    ]);
    expect(stored.rows.map((r) => r.body)).toEqual([first!.rawBody.toString('utf8')]);
    await expect
      .poll(
        async () =>
          (await v1(t, 'GET', `/subscriptions/${subscriptions.premium}/deliveries`, acme.key)).json().data[0].status,
        { timeout: 10_000 },
      )
      .toBe('succeeded');
  });
});

describe('predictions after a transfer', () => {
  it("rate the new owner's harsh braking over the new owner's miles: neither side's driving mixes with the other's", async () => {
    const ago = (days: number, seconds = 0) => new Date(Date.now() - days * dayMs + seconds * 1000);
    const readings = async (to: { id: string; generated_secret: string | null }, vehicle: string, list: unknown[]) => {
      const response = await pushGeneric(t, 'generic', to.id, to.generated_secret!, { readings: list });
      expect(response.statusCode, response.body).toBe(202);
      await settle(t);
    };
    const hardBrake = (vehicle: string, ts: Date) => ({
      vehicle,
      ts: ts.toISOString(),
      signals: { events: [{ type: 'hard_brake', g: 0.45 }] },
    });
    const van = (await t.createVehicle(acme.id, { provider_connection_id: connection.id, provider_vehicle_id: 'p-2' }))
      .id as string;
    await t.pool.query(`UPDATE vehicle_ownerships SET started_at = $2 WHERE vehicle_id = $1`, [van, ago(30)]);
    const brakeService = await t.admin('POST', `/vehicles/${van}/service-entries`, {
      type: 'brake_pads',
      performed_at: ago(20).toISOString(),
      odometer_miles: 10_000,
    });
    expect(brakeService.statusCode, brakeService.body).toBe(201);
    // The first owner: 9,000 miles and three hard brakes.
    await readings(connection, 'p-2', [
      { vehicle: 'p-2', ts: ago(20).toISOString(), signals: { odometer_km: 10_000 * kmPerMile } },
      hardBrake('p-2', ago(15)),
      hardBrake('p-2', ago(15, 600)),
      hardBrake('p-2', ago(14)),
      { vehicle: 'p-2', ts: ago(12).toISOString(), signals: { odometer_km: 19_000 * kmPerMile } },
    ]);
    const buyer = await t.createCompany('Buyer Transport');
    const transfer = await t.admin('POST', `/vehicles/${van}/transfer`, {
      to_company_id: buyer.id,
      at: ago(10).toISOString(),
    });
    expect(transfer.statusCode, transfer.body).toBe(200);
    const buyerConnection = await createConnection(t, buyer.id, 'generic');
    await t.admin('PATCH', `/vehicles/${van}`, {
      telematics_provider: 'generic',
      provider_connection_id: buyerConnection.id,
      provider_vehicle_id: 'b-2',
    });
    const subscription = await v1(t, 'POST', '/runs/subscribe', buyer.key, {
      vehicle_id: van,
      webhook_url: `${receiver.url}/hooks/transferred`,
      tier: 'premium',
      events: ['rapid_deceleration'],
    });
    expect(subscription.statusCode, subscription.body).toBe(201);
    // The new owner: 500 miles and two hard brakes, the second one now (the event its subscription gets).
    await readings(buyerConnection, 'b-2', [
      { vehicle: 'b-2', ts: ago(5).toISOString(), signals: { odometer_km: 19_300 * kmPerMile } },
      hardBrake('b-2', ago(5, 60)),
    ]);
    await new Promise((resolve) => setTimeout(resolve, 10));
    await readings(buyerConnection, 'b-2', [
      { vehicle: 'b-2', ts: ago(0).toISOString(), signals: { odometer_km: 19_500 * kmPerMile } },
      hardBrake('b-2', ago(0)),
    ]);
    await expect.poll(() => bodiesTo('transferred').length, { timeout: 10_000 }).toBe(1);
    const [body] = bodiesTo('transferred');
    expect(body!.json.event).toBe('rapid_deceleration');
    // 2 hard brakes in 500 miles (0.4 per 100): pads last 50,000 / 1.4. The new owner's two over the
    // car's 9,500 miles would read 48,969; every owner's five over them, 47,500 (the history report's rate).
    expect(body!.json.predictions.brake_replacement).toBe(
      `About 26,214 miles left (estimate: pads last about 35,714 miles at this vehicle's braking; last brake service ${ago(20).toISOString().slice(0, 10)}).`,
    );
  });
});
