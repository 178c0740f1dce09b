/**
 * `npm run demo`: the full service plus a demo company, its API key (printed once), a simulated
 * fleet streaming telematics through the real push endpoint every few seconds, a manually tracked
 * van with a service run, a console user (email and password printed), a local webhook receiver that prints every delivery it verifies, then
 * ready-to-paste curl commands. Ctrl-C stops it. It calls the API as an integrator would, through
 * the SDK (packages/sdk): the operator's setup calls use plain fetch (the SDK covers the public API).
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSimulatedFleet, type SimulatedReading } from './simulated-fleet.js';
import { signSimulatedBody } from '../providers/simulator.js';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/log.js';
import { providerSecretHeaders } from './log-redaction.js';
import { closeOnSignals, startService } from './service.js';
import {
  createClient,
  verifyCoreWebhook,
  verifyMonitoringWebhook,
  WebhookVerificationError,
  type CoreWebhookEvent,
} from '@fleet-telematics/sdk';
import { monitoringKinds } from '../src/domain/monitoring-kinds.js';

const base = loadConfig();
// The demo's receiver listens on loopback, which the SSRF guard refuses unless allowed.
const config = {
  ...base,
  adminToken: base.adminToken ?? randomBytes(24).toString('hex'),
  webhookAllowNets: [...base.webhookAllowNets, '127.0.0.1/32'],
};
const log = createLogger(
  config.logLevel === 'info' ? 'warn' : config.logLevel,
  'fleet',
  undefined,
  providerSecretHeaders,
);
const closers = await startService(config, log, 'start');
closeOnSignals(closers, log);

const origin = `http://127.0.0.1:${config.port}`;

async function call(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<any> {
  const response = await fetch(`${origin}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const payload = (await response.json()) as { data?: unknown; error?: { message: string } };
  if (!response.ok) throw new Error(`${method} ${path}: ${payload.error?.message ?? response.status}`);
  return payload.data;
}

const operator = { authorization: `Bearer ${config.adminToken}` };
const company = await call('POST', '/admin/v1/companies', operator, {
  name: 'Demo Fleet',
  external_ids: { demo_shop: 'cus_demo_1' },
});
const { key } = await call('POST', `/admin/v1/companies/${company.id}/api-keys`, operator, { name: 'demo' });
const api = createClient({ baseUrl: origin, apiKey: key });
// A console user with a password made for this run (the console shows the same fleet and deliveries).
const consoleUser = {
  email: `demo-${company.id.slice(0, 8)}@fleet.demo`,
  password: randomBytes(12).toString('base64url'),
};
await call('POST', `/admin/v1/companies/${company.id}/users`, operator, { ...consoleUser, name: 'Demo Developer' });

// A receiver as an integrator would write one: raw body, signature checked before parsing.
let signingSecret = '';
let monitoringSecret = '';
/** Monitoring events (docs/monitoring.md) arrive on /monitoring, signed `X-Service-Signature: sha256=<hex>`. */
function receiveMonitoringEvent(body: Buffer, signature: string | undefined): number {
  const event = refusedOr(() => verifyMonitoringWebhook(monitoringSecret, signature, body), 'monitoring event');
  if (!event) return 401;
  console.log(
    `monitoring ${event.event} ${event.severity} (X-Service-Signature verified) at ${event.occurred_at}: ${event.details.description} event_id ${event.event_id}`,
  );
  return 204;
}
/** The verified event, or null after printing why it was refused. */
function refusedOr<T>(verify: () => T, what: string): T | null {
  try {
    return verify();
  } catch (err) {
    if (!(err instanceof WebhookVerificationError)) throw err;
    console.log(`${what} refused: signature ${err.reason}`);
    return null;
  }
}
const receiver = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const body = Buffer.concat(chunks);
    if (request.url === '/monitoring') {
      response
        .writeHead(receiveMonitoringEvent(body, request.headers['x-service-signature'] as string | undefined))
        .end();
      return;
    }
    const envelope = refusedOr(
      () =>
        verifyCoreWebhook<
          CoreWebhookEvent & { data: { reference_code: string; status: string; scheduling_state: string } }
        >(signingSecret, request.headers['service-signature'] as string | undefined, body),
      'webhook',
    );
    if (!envelope) {
      response.writeHead(401).end();
      return;
    }
    const run = envelope.data;
    console.log(
      `webhook ${envelope.event} (signature verified): run ${run.reference_code} ${run.status}/${run.scheduling_state}, event_id ${envelope.event_id}`,
    );
    response.writeHead(204).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
receiver.unref();
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks`;
const monitoringUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/monitoring`;
const subscription = await api.createWebhookSubscription({
  url: receiverUrl,
  events: [
    'run.created',
    'run.appointment_updated',
    'run.appointment_confirmed',
    'run.appointment_cancelled',
    'run.completed',
    'run.dispatch_proposed',
  ],
});
signingSecret = subscription.signing_secret;
await call('POST', `/admin/v1/companies/${company.id}/roster`, operator, {
  type: 'shop',
  name: 'Loop Fleet Service',
  skills: ['service', 'inspection'],
  latitude: 41.8855,
  longitude: -87.6403,
});

const van = await call('POST', `/admin/v1/companies/${company.id}/vehicles`, operator, {
  name: 'Van 3',
  vin: '1FTBW3XM6HKA00001',
  license_plate: 'DEMO-3',
  make: 'Ford',
  model: 'Transit',
  year: 2021,
  telematics_provider: null,
  home_location: {
    name: 'Main yard',
    street_1: '400 W Lake St',
    city: 'Chicago',
    state: 'IL',
    postal_code: '60606',
    country: 'US',
  },
});
await api.updateVehicle(van.id, { odometer_miles: 48_210 });
// The simulated fleet pushes through the same signed endpoint a real provider would use.
const simulatorConnection = await call('POST', `/admin/v1/companies/${company.id}/provider-connections`, operator, {
  provider: 'simulator',
  name: 'Simulated fleet',
  config: {},
});
const tickSeconds = 5;
// Each tick advances the fleet by tickSeconds; starting one tick back keeps readings at "now", never ahead.
const fleet = createSimulatedFleet({
  seed: 2026,
  vehicleCount: 12,
  start: new Date(Date.now() - tickSeconds * 1000),
  idPrefix: 'demo',
});
const simulated: Array<{ id: string; name: string }> = [];
for (const v of fleet.vehicles) {
  simulated.push(
    await call('POST', `/admin/v1/companies/${company.id}/vehicles`, operator, {
      name: v.name,
      vin: v.vin,
      make: v.make,
      model: v.model,
      year: v.year,
      provider_connection_id: simulatorConnection.id,
      provider_vehicle_id: v.providerVehicleId,
    }),
  );
}
let lastTick: { readings: SimulatedReading[] } = { readings: [] };
const pushTick = async () => {
  lastTick = fleet.tick(tickSeconds).payload;
  const body = JSON.stringify(lastTick);
  await fetch(simulatorConnection.ingest_url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-signature': signSimulatedBody(body, simulatorConnection.generated_secret),
    },
    body,
  }).catch((err: unknown) => log.warn({ err }, 'simulated push failed'));
};
await pushTick();
setInterval(() => void pushTick(), tickSeconds * 1000).unref();
const truck = simulated[0]!;

// Monitoring (docs/monitoring.md): a simulated vehicle on shift now (the first one when all are parked),
// subscribed to all 20 kinds. A speed limit of 100 km/h, a depot geofence, an oil change due
// within 500 mi (at once) and a mileage threshold just ahead make most kinds show up within
// minutes of driving; the simulator produces the rest now and then.
const onShiftId = lastTick.readings.find((r) => r.signals.engine_state !== 'off')?.vehicle;
const monitored = simulated[fleet.vehicles.findIndex((v) => v.providerVehicleId === onShiftId)] ?? simulated[0]!;
await api.createGeofence({
  name: 'Chicago depot',
  area: { type: 'Circle', center: { lat: 41.8781, lon: -87.6298 }, radius_m: 3000 },
});
// The first push is being ingested: wait (a few seconds at most) for the vehicle's odometer.
let truckMiles: number | null = null;
for (let tries = 0; tries < 50 && truckMiles === null; tries++) {
  // `signals` is open-ended in the document (docs/signals.md); the odometer is {km, miles, as_of, source}.
  const { odometer } = (await api.getVehicle(monitored.id)).signals as { odometer?: { miles?: unknown } };
  const miles = odometer?.miles;
  if (typeof miles === 'number') truckMiles = miles;
  else await new Promise((resolve) => setTimeout(resolve, 200));
}
if (truckMiles !== null) {
  await call('POST', `/admin/v1/vehicles/${monitored.id}/service-entries`, operator, {
    type: 'oil_change',
    performed_at: new Date(Date.now() - 30 * 86_400_000).toISOString(),
    odometer_miles: Math.max(0, Math.round(truckMiles) - 4501),
  });
}
const monitoring = await api.createMonitoringSubscription({
  vehicle_id: monitored.id,
  webhook_url: monitoringUrl,
  tier: 'premium',
  events: [...monitoringKinds],
  options: {
    speed_limit_kph: 100,
    ...(truckMiles !== null ? { mileage_threshold_miles: Math.round(truckMiles) + 2 } : {}),
  },
});
monitoringSecret = monitoring.signing_secret;
const { run } = await call('POST', `/admin/v1/companies/${company.id}/service-requests`, operator, {
  vehicle_id: van.id,
  title: 'Oil change and brake check',
  items: [
    { title: 'Oil change', type: 'service' },
    { title: 'Brake inspection', type: 'inspection' },
  ],
  customer: {
    name: 'Dana Whitfield',
    email: 'dana@demo-fleet.example',
    phone: '+1 312 555 0142',
    display_address: '400 W Lake St, Chicago, IL 60606',
  },
  preferred_start: new Date(Date.now() + 2 * 86_400_000).toISOString(),
  preferred_end: new Date(Date.now() + 2 * 86_400_000 + 4 * 3_600_000).toISOString(),
});
await call('POST', `/admin/v1/runs/${run.id}/propose`, operator, {
  start: new Date(Date.now() + 3 * 86_400_000).toISOString(),
  end: new Date(Date.now() + 3 * 86_400_000 + 2 * 3_600_000).toISOString(),
});

const auth = `-H "Authorization: Bearer ${key}"`;
console.log(`
Fleet telematics demo is running on ${origin} (Ctrl-C stops it).

Demo company "${company.name}" (${company.id}), ${simulated.length} simulated vehicles reporting every ${tickSeconds} s
API key, shown once: ${key}
Developer console: ${origin}/console  sign in as ${consoleUser.email} with password ${consoleUser.password}
Operator token (ADMIN_TOKEN for fleetctl): ${base.adminToken ? '(the one you set)' : config.adminToken}

Try:
  curl -s ${auth} '${origin}/api/v1/vehicles?include_total=true'
  curl -s ${auth} ${origin}/api/v1/vehicles/${van.id}
  curl -s ${auth} -X PUT -H 'Content-Type: application/json' -d '{"odometer_miles": 48350, "name": "Van 3 (blue)"}' ${origin}/api/v1/vehicles/${van.id}
  curl -s ${auth} ${origin}/api/v1/vehicles/${truck.id}        # ${truck.name}: live signals from the simulator
  curl -s ${auth} -X POST ${origin}/api/v1/vehicles/${van.id}/refresh      # 400 REFRESH_NOT_SUPPORTED: tracked by hand
  curl -s ${auth} '${origin}/api/v1/runs?scheduling_state=proposed'
  curl -s ${auth} ${origin}/api/v1/runs/${run.id}
  curl -s ${auth} -X POST ${origin}/api/v1/webhook-subscriptions/${subscription.id}/test    # the receiver prints webhook.test
  curl -s ${auth} ${origin}/api/v1/webhook-subscriptions/${subscription.id}/deliveries      # every attempt, recorded

Monitoring: ${monitored.name} is subscribed to all 20 event kinds (subscription ${monitoring.id}).
  curl -s ${auth} ${origin}/v1/subscriptions/${monitoring.id}                  # with endpoint health
  curl -s ${auth} '${origin}/v1/subscriptions/${monitoring.id}/deliveries?limit=5'
  curl -s ${auth} -X POST -H 'Content-Type: application/json' -d '{"since": "${new Date(Date.now() - 3_600_000).toISOString()}"}' ${origin}/v1/subscriptions/${monitoring.id}/dry-run
  curl -s ${auth} -X POST ${origin}/v1/deliveries/<delivery_id>/retry           # one more attempt now

Webhook receiver: ${receiverUrl} prints each delivery below once its Service-Signature is verified,
and ${monitoringUrl} each monitoring event once its X-Service-Signature is verified.

API reference: ${origin}/docs   OpenAPI: ${origin}/openapi.json   Metrics: ${origin}/metrics
`);
