/**
 * A seeded fuzz run over every route of the app (enumerated from the app itself). Each request
 * starts valid (the right credentials, the caller's own records, a body and query generated from
 * the route's schema) so it reaches the handler and its SQL, then gets a few hostile changes:
 * another method, hostile or foreign ids, huge, negative or malformed query values, bodies of the
 * wrong type, deep, huge, with NUL or invalid UTF-8 or unknown fields, a wrong content type,
 * missing or wrong credentials, odd headers. No answer may be a 5xx, and every 4xx carries the
 * error envelope (docs/api.md).
 *
 * The seed is printed; replay a run with FUZZ_SEED=<seed>. FUZZ_REQUESTS changes the count.
 */
import { randomInt } from 'node:crypto';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { providerIds } from '../../providers/types.js';
import { hmacHex } from '../../providers/signing.js';
import { errors } from '../../src/errors.js';
import { adminToken, createTestApp, type TestApp } from '../helpers/app.js';
import { createConnection } from '../helpers/ingest.js';
import { insertDelivery, v1 } from '../helpers/monitoring.js';

const seed = Number(process.env.FUZZ_SEED ?? randomInt(2 ** 31));
const requestCount = Number(process.env.FUZZ_REQUESTS ?? 10_000);
const concurrency = 8;

/** mulberry32: small, fast and good enough to pick cases reproducibly. */
function generator(s: number) {
  let state = s >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = state;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1));
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const chance = (p: number) => next() < p;
  return { next, int, pick, chance };
}
type Rng = ReturnType<typeof generator>;

interface Route {
  method: string;
  url: string;
}

/** Every method and path the app serves, read from fastify's own route tree. */
function enumerateRoutes(tree: string): Route[] {
  const routes: Route[] = [];
  const segments: string[] = [];
  for (const line of tree.split('\n')) {
    const match = /^([│ ]*)[├└]── (\S*)(?: \(([^)]+)\))?$/.exec(line);
    if (!match) continue;
    const depth = match[1]!.length / 4;
    segments.length = depth;
    segments.push(match[2]!);
    for (const method of match[3]?.split(', ') ?? []) routes.push({ method, url: segments.join('') });
  }
  return routes;
}

const methods = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'PROPFIND', 'SEARCH'];

/** Path segments, already as they would appear in a URL: broken escapes are the point. */
const hostileSegments = [
  '',
  'x',
  '0',
  '-1',
  '1e21',
  'NaN',
  'null',
  'undefined',
  '%00',
  '%E0%A4%A',
  '%zz',
  '%',
  '%ED%A0%80',
  '%F0%9F%9A%9A',
  '..',
  '%2e%2e%2f%2e%2e%2fetc%2fpasswd',
  "'%3B%20DROP%20TABLE%20runs%3B--",
  '00000000-0000-0000-0000-000000000000',
  'FFFFFFFF-FFFF-4FFF-8FFF-FFFFFFFFFFFF',
  '123e4567-e89b-12d3-a456-42661417400',
  'a'.repeat(101),
  'a'.repeat(4000),
  '%41'.repeat(120),
];

/** Hostile query values by the parameter's type: the values most likely to reach SQL wrongly. */
const hostileQuery = {
  number: [
    '1e21',
    '-1e21',
    '9'.repeat(400),
    '2147483648',
    '9007199254740993',
    '-1',
    '0',
    '1.5',
    'NaN',
    'Infinity',
    '0x10',
    ' 5',
    '',
  ],
  time: [
    '0000-01-01T00:00:00Z',
    '0001-01-01T00:00:00Z',
    '9999-12-31T23:59:59Z',
    '9999-12-31T23:59:59-14:00',
    '2024-02-30T00:00:00Z',
    '2024-01-01T23:59:60Z',
    '2024-01-01T00:00:00.123456789+14:00',
    '2024-01-01',
    '1e21',
  ],
  text: ['', '%00', '%ED%A0%80', '%E0%A4%A', 'x'.repeat(3000), 'true', 'null', '[]', 'open', '%F0%9F%9A%9A'],
};

const queryKeys = [
  'limit',
  'offset',
  'updated_since',
  'include_total',
  'status',
  'id',
  '__proto__',
  'constructor',
  'x'.repeat(300),
];

function hostileString(rng: Rng): string {
  return rng.pick([
    '',
    ' ',
    '\u0000',
    'a\u0000b',
    '\ud800',
    '\udfff x',
    'é',
    '🚚',
    "'; DROP TABLE vehicles;--",
    '${7*7}{{7*7}}',
    '<script>alert(1)</script>',
    '../../etc/passwd',
    'x'.repeat(rng.int(1, 300)),
    'x'.repeat(5000),
    '0000-01-01T00:00:00Z',
    '9999-12-31T23:59:59Z',
    '1e21',
  ]);
}

function deepValue(levels: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = i % 2 ? [value] : { a: value };
  return value;
}

const hostileNumbers = [1e308, -1e308, -1, 0, 1.5, 2 ** 53 + 2, -0, 1e21, 10_000_001, 2147483648];

/** A hostile value shaped for the field's schema most of the time, any hostile value otherwise. */
function hostileValue(rng: Rng, schema?: any): unknown {
  const types = [schema?.type].flat();
  if (rng.chance(0.6) && types.includes('string')) {
    if (schema.format === 'date-time') return rng.pick(hostileQuery.time);
    return hostileString(rng);
  }
  if (rng.chance(0.6) && (types.includes('number') || types.includes('integer'))) return rng.pick(hostileNumbers);
  switch (rng.int(0, 10)) {
    case 0:
      return null;
    case 1:
      return rng.pick(hostileNumbers);
    case 2:
      return rng.chance(0.5);
    case 3:
      return [];
    case 4:
      return {};
    case 5:
      return deepValue(rng.int(20, 60));
    case 6:
      return Array.from({ length: rng.pick([101, 1000]) }, () => 'x');
    case 7:
      return { unknown_field: 1 };
    case 8:
      return Object.fromEntries(Array.from({ length: 150 }, (_, i) => [`k${i}`, 'v']));
    case 9:
      return [hostileString(rng)];
    default:
      return hostileString(rng);
  }
}

/** Values that satisfy the patterns the schemas use, so generated bodies get past validation. */
const patternExamples: Record<string, string[]> = {
  '^[A-HJ-NPR-Za-hj-npr-z0-9]{17}$': ['1HGCM82633A004352', '1M8GDM9AXKP042788'],
  '^[A-Z]{2}$': ['US', 'DE'],
  '^[a-z][a-z0-9_]{1,49}$': ['oil_change', 'tire_rotation', 'brake_inspection'],
};

function uuid(rng: Rng): string {
  const hex = Array.from({ length: 32 }, () => rng.int(0, 15).toString(16)).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20)}`;
}

function timestamp(rng: Rng): string {
  return new Date(Date.UTC(rng.int(2020, 2030), rng.int(0, 11), rng.int(1, 28), rng.int(0, 23))).toISOString();
}

/** Which records a path parameter or body field names. */
const idKinds: Record<string, string> = {
  company_id: 'company',
  vehicle_id: 'vehicle',
  run_id: 'run',
  subscription_id: 'subscription',
  key_id: 'key',
  member_id: 'member',
  connection_id: 'connection',
  connectionId: 'connection',
  provider_connection_id: 'connection',
  geofence_id: 'geofence',
  delivery_id: 'monitoring_delivery',
  geofence_ids: 'geofence',
  user_id: 'user',
};

/** The record kind a path parameter names: under /v1 a subscription is a monitoring subscription. */
function kindOf(url: string, name: string): string | undefined {
  return url.startsWith('/v1/') && name === 'subscription_id' ? 'monitoring_subscription' : idKinds[name];
}

/** Valid geofence areas: one generated from the schema is bounded but seldom a closed ring. */
const areas = [
  { type: 'Circle', center: { lat: 41.52, lon: -88.08 }, radius_m: 500 },
  {
    type: 'Polygon',
    coordinates: [
      [
        [-88.1, 41.5],
        [-88.0, 41.5],
        [-88.0, 41.6],
        [-88.1, 41.5],
      ],
    ],
  },
];

/** A value that satisfies `schema` (from the OpenAPI document) for the field `name`. */
function generate(schema: any, rng: Rng, idOf: (kind: string) => string, name = '', depth = 0): unknown {
  if (!schema || depth > 8) return null;
  if (schema.anyOf) return generate(rng.pick(schema.anyOf), rng, idOf, name, depth);
  if (schema.enum) return rng.pick(schema.enum);
  const types = [schema.type].flat();
  // Nullable fields are mostly given a value; null is a mutation's job.
  const type = types.length > 1 && rng.chance(0.8) ? types.find((t) => t !== 'null') : rng.pick(types);
  switch (type) {
    case 'null':
      return null;
    case 'boolean':
      return rng.chance(0.5);
    case 'integer':
    case 'number': {
      const min = schema.minimum ?? 0;
      const max = schema.maximum ?? 1000;
      if (rng.chance(0.2)) return rng.pick([min, max]);
      const value = min + rng.next() * Math.min(max - min, 100_000);
      return type === 'integer' ? Math.round(value) : value;
    }
    case 'string': {
      if (schema.format === 'uuid') return idOf(idKinds[name] ?? 'vehicle');
      // A dry run's `since` is at most 90 days back: mostly recent, so the replay is reached.
      if (schema.format === 'date-time' && name === 'since' && rng.chance(0.8)) {
        return new Date(Date.now() - rng.int(0, 80) * 86_400_000).toISOString();
      }
      if (schema.format === 'date-time') return timestamp(rng);
      if (schema.format === 'email') return rng.pick(['dana@example.com', 'a@b.co']);
      if (schema.pattern) return rng.pick(patternExamples[schema.pattern] ?? ['x']);
      if (name === 'url' || name === 'webhook_url')
        return rng.pick(['https://example.com/hook', 'http://127.0.0.1:9/hook']);
      // VINs of the fixtures' vehicles (a generated string never has a valid check digit).
      if (name === 'vin') return rng.pick(['1M8GDM9AXKP042788', '1HGCM82633A004352']);
      const min = schema.minLength ?? 0;
      const max = Math.min(schema.maxLength ?? 40, 60);
      return 'abcdefghij'.repeat(7).slice(0, rng.int(Math.max(min, 1), Math.max(max, 1)));
    }
    case 'array': {
      const count = rng.int(schema.minItems ?? 0, Math.min(schema.maxItems ?? 3, 3));
      const items = Array.from({ length: count }, () => generate(schema.items, rng, idOf, name, depth + 1));
      return schema.uniqueItems ? [...new Set(items)] : items;
    }
    case 'object': {
      if (name === 'area') return structuredClone(rng.pick(areas));
      const value: Record<string, unknown> = {};
      const required = new Set<string>(schema.required ?? []);
      for (const [key, property] of Object.entries<any>(schema.properties ?? {})) {
        if (required.has(key) || rng.chance(0.6)) value[key] = generate(property, rng, idOf, key, depth + 1);
      }
      for (const property of Object.values<any>(schema.patternProperties ?? {})) {
        for (let i = rng.int(0, 2); i > 0; i--) {
          const key = rng.pick(patternExamples['^[a-z][a-z0-9_]{1,49}$']!);
          value[key] = generate(property, rng, idOf, key, depth + 1);
        }
      }
      return value;
    }
    default:
      return {};
  }
}

/** One change deep inside a body: a hostile value (shaped for the field), an unknown field, a missing one. */
function mutate(body: unknown, schema: any, rng: Rng): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return hostileValue(rng);
  let node = body as Record<string, unknown>;
  let nodeSchema = schema;
  for (let steps = rng.int(0, 3); steps > 0; steps--) {
    const keys = Object.keys(node).filter(
      (k) => node[k] !== null && typeof node[k] === 'object' && !Array.isArray(node[k]),
    );
    if (keys.length === 0) break;
    const key = rng.pick(keys);
    node = node[key] as Record<string, unknown>;
    const property = nodeSchema?.properties?.[key];
    nodeSchema = property?.anyOf?.find((s: any) => s.type === 'object') ?? property;
  }
  const keys = Object.keys(node);
  const roll = rng.next();
  if (roll < 0.15 || keys.length === 0) {
    node[rng.pick(['unknown', 'constructor', '__proto__x', 'x'.repeat(200)])] = hostileValue(rng);
  } else if (roll < 0.25) {
    delete node[rng.pick(keys)];
  } else {
    const key = rng.pick(keys);
    node[key] = hostileValue(rng, nodeSchema?.properties?.[key]);
  }
  return body;
}

function rawBody(rng: Rng): string | Buffer {
  return rng.pick<() => string | Buffer>([
    () => 'null',
    () => '[]',
    () => '[{"name":"x"}]',
    () => '"text"',
    () => '42',
    () => 'true',
    () => '{',
    () => '{"a":1,}',
    () => '',
    () => '\uFEFF{}',
    () => '{"__proto__":{"admin":true}}',
    () => '{"constructor":{"prototype":{"admin":true}}}',
    () => '{"name":"\\u0000"}',
    () => '{"name":"\\ud800"}',
    () => Buffer.from([0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
    () => Buffer.from([0xc0, 0xaf]),
    () => '{"a":'.repeat(5000) + '1' + '}'.repeat(5000),
    () => '['.repeat(50_000) + ']'.repeat(50_000),
    () => JSON.stringify({ name: 'x'.repeat(200_000) }),
    () => 'name=x&vin=y',
    () => '<xml/>',
  ])();
}

type Company = 'acme' | 'other';

interface Fixtures {
  /** Each company's records the fuzz reads and changes, by kind. */
  own: Record<Company, Record<string, string[]>>;
  /** Records it may delete or deactivate, so the others stay usable for the whole run. */
  spare: Record<string, string[]>;
  keys: Record<Company, string>;
  generic: { id: string; secret: string };
  traccar: { id: string; token: string };
}

describe('fuzz', () => {
  let t: TestApp;
  let fixtures: Fixtures;
  let routes: Route[];
  let operations: Map<string, any>;

  beforeAll(async () => {
    t = await createTestApp({
      RATE_LIMIT_PER_MINUTE: '10000000',
      WEBHOOK_TESTS_PER_MINUTE: '10000',
      WEBHOOK_SUBSCRIPTIONS_PER_COMPANY: '30',
      MONITORING_SUBSCRIPTIONS_PER_COMPANY: '30',
      GEOFENCES_PER_COMPANY: '30',
      WEBHOOK_ALLOW_NETS: '127.0.0.1/32',
    });
    const acme = await t.createCompany('Acme');
    const other = await t.createCompany('Other');
    const spareKey = (await t.admin('POST', `/companies/${acme.id}/api-keys`, { name: 'spare' })).json().data;
    const spareUser = (
      await t.admin('POST', `/companies/${acme.id}/users`, {
        email: 'spare@acme.test',
        name: 'Spare',
        password: 'spare password 1',
      })
    ).json().data;
    const generic = await createConnection(t, acme.id, 'generic');
    const traccar = await createConnection(t, acme.id, 'traccar');
    const samsara = await createConnection(t, other.id, 'samsara', { api_token: 'samsara-token' });
    const spareConnection = await createConnection(t, acme.id, 'motive', { webhook_secret: 'spare-secret-1' });
    const vehicle = async (companyId: string, body: Record<string, unknown> = {}) =>
      (await t.createVehicle(companyId, body)).id;
    const acmeVehicles = [
      await vehicle(acme.id),
      await vehicle(acme.id, {
        name: 'Pushed',
        provider_connection_id: generic.id,
        telematics_provider: 'generic',
        provider_vehicle_id: 'g-1',
      }),
      await vehicle(acme.id, {
        name: 'Tracked',
        provider_connection_id: traccar.id,
        telematics_provider: 'traccar',
        provider_vehicle_id: 't-1',
        vin: '1M8GDM9AXKP042788',
      }),
    ];
    const otherVehicles = [
      await vehicle(other.id, {
        name: 'Pulled',
        provider_connection_id: samsara.id,
        telematics_provider: 'samsara',
        provider_vehicle_id: 's-1',
      }),
    ];
    const run = async (companyId: string, vehicleId: string) =>
      (
        await t.admin('POST', `/companies/${companyId}/service-requests`, {
          vehicle_id: vehicleId,
          items: [{ title: 'Oil', type: 'oil_change' }],
        })
      ).json().data.run.id as string;
    const subscription = async (key: string) =>
      (
        await t.api('POST', '/webhook-subscriptions', key, { url: 'http://127.0.0.1:9/hook', events: ['run.created'] })
      ).json().data.id as string;
    const geofence = async (key: string) =>
      (await v1(t, 'POST', '/geofences', key, { name: 'Yard', area: areas[0] })).json().data.id as string;
    const monitoring = async (key: string, vehicleId: string) => {
      const { id } = (
        await v1(t, 'POST', '/runs/subscribe', key, {
          vehicle_id: vehicleId,
          webhook_url: 'http://127.0.0.1:9/hook',
          tier: 'premium',
          events: ['speed_limit_exceeded', 'oil_change_needed'],
        })
      ).json().data;
      // A delivery with attempts, so the deliveries list and endpoint health read real rows.
      const companyId = key === acme.key ? acme.id : other.id;
      const subscription = { id, companyId, vehicleId };
      const delivery = await insertDelivery(t, subscription, {
        kind: 'speed_limit_exceeded',
        status: 'failed',
        createdAt: new Date(),
        attempts: [{ at: new Date(), statusCode: 500, error: 'HTTP 500' }],
      });
      return { subscription: [id as string], delivery: [delivery.id] };
    };
    const monitoringFixtures = (m: { subscription: string[]; delivery: string[] }) => ({
      monitoring_subscription: m.subscription,
      monitoring_delivery: m.delivery,
    });
    const member = async (name: string) =>
      (await t.admin('POST', `/companies/${acme.id}/roster`, { type: 'shop', name, skills: ['oil_change'] })).json()
        .data.id as string;
    fixtures = {
      own: {
        acme: {
          company: [acme.id],
          vehicle: acmeVehicles,
          run: [await run(acme.id, acmeVehicles[0]!), await run(acme.id, acmeVehicles[1]!)],
          subscription: [await subscription(acme.key)],
          ...monitoringFixtures(await monitoring(acme.key, acmeVehicles[0]!)),
          geofence: [await geofence(acme.key)],
          member: [await member('Quick Lube')],
          connection: [generic.id, traccar.id],
          key: [spareKey.id],
        },
        other: {
          company: [other.id],
          vehicle: otherVehicles,
          run: [await run(other.id, otherVehicles[0]!)],
          subscription: [await subscription(other.key)],
          ...monitoringFixtures(await monitoring(other.key, otherVehicles[0]!)),
          geofence: [await geofence(other.key)],
          member: [],
          connection: [samsara.id],
          key: [],
        },
      },
      spare: {
        vehicle: [await vehicle(acme.id, { name: 'Spare' }), await vehicle(other.id, { name: 'Spare' })],
        subscription: [await subscription(acme.key)],
        ...monitoringFixtures(await monitoring(acme.key, acmeVehicles[1]!)),
        geofence: [await geofence(acme.key)],
        // Only a spare key may be revoked, so the keys the fuzz uses keep working.
        key: [spareKey.id],
        user: [spareUser.id],
        member: [await member('Spare Shop')],
        connection: [spareConnection.id],
      },
      keys: { acme: acme.key, other: other.key },
      generic: { id: generic.id, secret: generic.generated_secret! },
      traccar: { id: traccar.id, token: traccar.generated_secret! },
    };

    // The queue board (a third-party operator UI with its own API and error shape) is fuzzed in
    // test/integration/queue-board.test.ts; here it would only dilute the requests our routes get.
    // The developer console answers HTML pages behind its own sessions, not the JSON envelope; its
    // hostile inputs are in test/integration/console-sessions.test.ts.
    routes = enumerateRoutes(t.app.printRoutes({ commonPrefix: false })).filter(
      (route) => !route.url.startsWith('/admin/queues') && !route.url.startsWith('/console'),
    );
    const doc = (await t.app.inject('/openapi.json')).json();
    operations = new Map();
    for (const [path, pathOperations] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const [method, operation] of Object.entries<any>(pathOperations)) {
        const url = path.replace(/\{(\w+)\}/g, ':$1');
        operations.set(`${method.toUpperCase()} ${url}`, operation);
        expect(routes, `${method} ${path} is enumerated`).toContainEqual({ method: method.toUpperCase(), url });
      }
    }
  });
  afterAll(() => t?.close());

  /** A request that starts valid for `route`, then takes a few hostile changes. */
  function buildRequest(route: Route, rng: Rng): InjectOptions {
    const operation = operations.get(`${route.method} ${route.url}`) ?? operations.get(`GET ${route.url}`);
    const area = route.url.startsWith('/admin')
      ? 'admin'
      : route.url.startsWith('/api/') || route.url.startsWith('/v1/')
        ? 'api'
        : 'other';
    const company: Company = area === 'api' && rng.chance(0.3) ? 'other' : 'acme';
    const own = fixtures.own[company];
    const idOf = (kind: string) => rng.pick(own[kind]?.length ? own[kind]! : (fixtures.own.acme[kind] ?? [uuid(rng)]));

    let method = route.method;
    const params: Record<string, string> = {};
    for (const [, name] of route.url.matchAll(/:(\w+)/g)) {
      const kind = kindOf(route.url, name!);
      // What a DELETE removes is a spare record; the run never deletes what it relies on.
      const spare = route.method === 'DELETE' && kind ? fixtures.spare[kind] : undefined;
      params[name!] = spare
        ? rng.pick(spare)
        : kind
          ? idOf(kind)
          : name === 'provider'
            ? 'generic'
            : fixtures.traccar.token;
    }
    if (route.url.startsWith('/ingest/v1/traccar')) params.connectionId = fixtures.traccar.id;
    if (route.url.startsWith('/ingest/v1/:provider')) params.connectionId = fixtures.generic.id;
    let wildcard = rng.pick(['static/swagger-ui.css', 'static/favicon-32x32.png', 'json']);

    const queryParameters: any[] = (operation?.parameters ?? []).filter((p: any) => p.in === 'query');
    const query: Array<[string, string]> = [];
    for (const parameter of queryParameters) {
      if (rng.chance(0.5)) query.push([parameter.name, String(generate(parameter.schema, rng, idOf, parameter.name))]);
    }
    if (route.url.startsWith('/ingest/v1/traccar') && route.method !== 'POST') {
      query.push(['id', 't-1'], ['lat', '52.1'], ['lon', '4.3'], ['timestamp', String(Math.floor(Date.now() / 1000))]);
    }

    const bodySchema = operation?.requestBody?.content?.['application/json']?.schema;
    let body: unknown = bodySchema ? generate(bodySchema, rng, idOf) : undefined;
    if (route.url.startsWith('/ingest/v1/:provider')) {
      body = { vehicle_id: 'g-1', ts: new Date().toISOString(), odometer_km: 1000 + rng.int(0, 1000) };
    }
    let raw: string | Buffer | undefined;
    let contentType: string | undefined = body === undefined ? undefined : 'application/json';
    if (route.url.startsWith('/ingest/v1/traccar') && route.method === 'POST') {
      raw = `id=t-1&lat=52.1&lon=4.3&timestamp=${Math.floor(Date.now() / 1000)}`;
      contentType = 'application/x-www-form-urlencoded';
    }
    let authorization: string | undefined =
      area === 'admin' ? `Bearer ${adminToken}` : area === 'api' ? `Bearer ${fixtures.keys[company]}` : undefined;
    let signed = route.url.startsWith('/ingest/v1/:provider');
    const headers: Record<string, string> = {};

    // Changes go mostly where the route takes input: its path ids, query parameters and body.
    const dimensions = ['method', 'path', 'query', 'type', 'auth', 'auth', 'header'];
    if (Object.keys(params).length > 0) dimensions.push('path', 'path');
    if (queryParameters.length > 0) dimensions.push('query', 'query', 'query', 'query');
    if (body !== undefined || raw !== undefined) dimensions.push('body', 'body', 'body', 'body');
    const changes = rng.pick([0, 1, 1, 1, 2, 2, 3]);
    for (let i = 0; i < changes; i++) {
      switch (rng.pick(dimensions)) {
        case 'method':
          method = rng.pick(methods);
          break;
        case 'path': {
          const names = Object.keys(params);
          if (names.length === 0) {
            wildcard = rng.pick(hostileSegments);
            break;
          }
          const name = rng.pick(names);
          const kind = kindOf(route.url, name) ?? 'vehicle';
          const foreign = fixtures.own[company === 'acme' ? 'other' : 'acme'][kind];
          // A DELETE never gets a real record here: the run keeps what it relies on.
          const real =
            route.method === 'DELETE'
              ? []
              : [() => rng.pick(foreign?.length ? foreign : [uuid(rng)]), () => rng.pick(Object.values(own).flat())];
          params[name] = rng.pick([
            ...real,
            () => uuid(rng),
            () => rng.pick(providerIds),
            () => rng.pick(hostileSegments),
            () => rng.pick(hostileSegments),
          ])();
          break;
        }
        case 'query': {
          const parameter = queryParameters.length > 0 && rng.chance(0.8) ? rng.pick(queryParameters) : null;
          const format =
            parameter?.schema?.format === 'date-time'
              ? 'time'
              : /integer|number/.test(parameter?.schema?.type)
                ? 'number'
                : 'text';
          const value = rng.pick(hostileQuery[format]);
          const name = parameter?.name ?? rng.pick(queryKeys);
          // Replaces the parameter's value; now and then it is repeated instead.
          for (let at = query.findIndex(([k]) => k === name); at >= 0; at = query.findIndex(([k]) => k === name)) {
            query.splice(at, 1);
          }
          if (rng.chance(0.15)) query.push([name, value], [name, value]);
          else query.push([name, value]);
          if (rng.chance(0.05)) query.push([rng.pick(['%', '', 'a[b]', 'a[]']), rng.pick(['', '=', '%zz'])]);
          break;
        }
        case 'body':
          if (body !== undefined && rng.chance(0.7)) body = mutate(body, bodySchema, rng);
          else {
            raw = rawBody(rng);
            contentType ??= 'application/json';
          }
          break;
        case 'type':
          contentType = rng.pick([
            undefined,
            'text/plain',
            'application/x-www-form-urlencoded',
            'application/json; charset=utf-16',
            'application/xml',
            'multipart/form-data; boundary=x',
          ]);
          if (raw === undefined && body === undefined) raw = '{}';
          break;
        case 'auth':
          signed = false;
          authorization = rng.pick([
            undefined,
            'Bearer',
            'Basic dXNlcjpwYXNz',
            `Bearer fk_${'z'.repeat(43)}`,
            `Bearer ${'x'.repeat(8000)}`,
            `Bearer ${area === 'admin' ? fixtures.keys.acme : adminToken}`,
            `${authorization} extra`,
          ]);
          break;
        default:
          if (rng.chance(0.5)) headers['x-forwarded-for'] = rng.pick(['1.2.3.4', 'garbage', '::1, 10.0.0.1', '']);
          else headers.host = rng.pick(['', 'a b', 'évil.example', 'x'.repeat(500), '[::1]:99999']);
      }
    }

    let url = route.url.replace(/:(\w+)/g, (_, name: string) => params[name]!).replace('*', wildcard);
    if (query.length > 0) url += `?${query.map(([k, v]) => `${k}=${v}`).join('&')}`;
    const payload = raw ?? (body === undefined ? undefined : JSON.stringify(body));
    if (authorization !== undefined) headers.authorization = authorization;
    if (contentType !== undefined && payload !== undefined) headers['content-type'] = contentType;
    if (signed && payload !== undefined) {
      headers['x-signature'] = `sha256=${hmacHex('sha256', fixtures.generic.secret, payload)}`;
    }
    return {
      method: method as InjectOptions['method'],
      url,
      headers,
      // Few client addresses, so the failed-auth limit trips and valid keys must get through it.
      remoteAddress: `198.51.100.${rng.int(1, 8)}`,
      ...(payload === undefined ? {} : { payload }),
    };
  }

  function problemWith(request: InjectOptions, response: LightMyRequestResponse): string | null {
    const status = response.statusCode;
    // 501 is the contract for a refresh of a provider whose pull is not written (docs/api.md).
    if (status === 501 && response.json().error?.code === 'REFRESH_NOT_IMPLEMENTED') return null;
    if (status >= 500) return `answered ${status}`;
    if (!response.headers['x-request-id']) return `answered ${status} without x-request-id`;
    if (status === 429 && !(Number(response.headers['retry-after']) > 0)) return 'answered 429 without Retry-After';
    if (status < 400 || request.method === 'HEAD') return null;
    let body: any;
    try {
      body = response.json();
    } catch {
      return `answered ${status} without a JSON body`;
    }
    if (body?.success !== false || typeof body.error?.message !== 'string' || !(body.error?.code in errors)) {
      return `answered ${status} without the error envelope`;
    }
    if (errors[body.error.code as keyof typeof errors].status !== status)
      return `answered ${status} with ${body.error.code}`;
    if (/\bat .+\.(ts|js):\d+/.test(response.body)) return `answered ${status} with a stack trace`;
    return null;
  }

  function describeRequest(request: InjectOptions): string {
    const payload = request.payload;
    const body =
      payload === undefined
        ? ''
        : Buffer.isBuffer(payload)
          ? `<${payload.length} bytes>`
          : String(payload).slice(0, 300);
    return `${request.method} ${String(request.url).slice(0, 300)} headers=${JSON.stringify(request.headers).slice(0, 300)} body=${body}`;
  }

  it(`answers ${requestCount} random requests over every route with no 5xx and the envelope on every 4xx`, async () => {
    console.log(`fuzz seed ${seed} (replay: FUZZ_SEED=${seed}), ${routes.length} routes`);
    const rng = generator(seed);
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    const reached = new Set<string>();
    for (let sent = 0; sent < requestCount; sent += concurrency) {
      const batch = Array.from({ length: Math.min(concurrency, requestCount - sent) }, () => {
        const route = rng.chance(0.98)
          ? rng.pick(routes)
          : {
              method: rng.pick(methods),
              url: `/${rng.pick(['api/v1', 'admin/v1', 'ingest/v1', 'v1', 'docs'])}/${rng.pick(hostileSegments)}`,
            };
        return { route, request: buildRequest(route, rng) };
      });
      const responses = await Promise.all(batch.map(({ request }) => t.app.inject(request)));
      responses.forEach((response, i) => {
        const { route, request } = batch[i]!;
        statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1);
        if (response.statusCode < 400) reached.add(`${route.method} ${route.url}`);
        const problem = problemWith(request, response);
        if (problem) failures.push(`${problem}: ${describeRequest(request)} → ${response.body.slice(0, 300)}`);
      });
    }
    const unreached = routes.map((r) => `${r.method} ${r.url}`).filter((r) => !reached.has(r));
    console.log(`statuses: ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}`);
    console.log(`routes that never answered a success: ${unreached.join(', ') || 'none'}`);
    if (failures.length > 0) console.log(failures.slice(0, 30).join('\n'));
    expect(failures, `seed ${seed}`).toEqual([]);
    // The run reached the handlers and their SQL, not only the validators.
    expect(unreached.length).toBeLessThan(routes.length * 0.1);
  }, 240_000);
});
