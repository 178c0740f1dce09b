/**
 * Hostile input against the public and operator APIs: every bad request answers a 4xx with the
 * error envelope, never a 500 and never a stack trace, and no input is unbounded.
 */
import { connect } from 'node:net';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, adminToken, type TestApp } from '../helpers/app.js';

let t: TestApp;
let acme: { id: string; key: string };
let vehicleId: string;
let subscriptionId: string;
let runId: string;

beforeAll(async () => {
  t = await createTestApp({ WEBHOOK_ALLOW_NETS: '127.0.0.1/32' });
  acme = await t.createCompany();
  vehicleId = (await t.createVehicle(acme.id)).id;
  subscriptionId = (
    await t.api('POST', '/webhook-subscriptions', acme.key, { url: 'http://127.0.0.1:9/hook', events: ['run.created'] })
  ).json().data.id;
  runId = (
    await t.admin('POST', `/companies/${acme.id}/service-requests`, {
      vehicle_id: vehicleId,
      title: 'Brakes',
      items: [{ title: 'Brake inspection', type: 'inspection' }],
    })
  ).json().data.run.id;
});
afterAll(() => t.close());

function expectRefusal(response: LightMyRequestResponse, status: number, code: string) {
  expect(response.statusCode, response.body).toBe(status);
  const body = response.json();
  expect(body).toMatchObject({ success: false, error: { code }, meta: { version: '1.0.0' } });
  expect(typeof body.error.message).toBe('string');
  if (code === 'INVALID_REQUEST') expect(body.error.details.errors.length).toBeGreaterThan(0);
  expect(response.body).not.toMatch(/\bat .+\.(ts|js):\d+/);
  return body;
}

const apiHeaders = () => ({ authorization: `Bearer ${acme.key}` });
const adminHeaders = { authorization: `Bearer ${adminToken}` };

describe('numbers are bounded before they reach SQL', () => {
  const lists = () => [
    { url: '/api/v1/runs', headers: apiHeaders() },
    { url: '/api/v1/vehicles', headers: apiHeaders() },
    { url: `/api/v1/webhook-subscriptions/${subscriptionId}/deliveries`, headers: apiHeaders() },
    { url: '/admin/v1/companies', headers: adminHeaders },
    { url: `/admin/v1/companies/${acme.id}/vehicles`, headers: adminHeaders },
  ];

  it('huge, negative, fractional, non-numeric and repeated paging values answer 400 naming the parameter', async () => {
    for (const { url, headers } of lists()) {
      for (const query of [
        'offset=1e21',
        'offset=1000001',
        'offset=-1',
        'offset=1.5',
        'limit=NaN',
        'limit=Infinity',
        'limit=0',
        'limit=201',
        'limit=99999999999999999999999',
        'limit=1&limit=2',
      ]) {
        const body = expectRefusal(
          await t.app.inject({ method: 'GET', url: `${url}?${query}`, headers }),
          400,
          'INVALID_REQUEST',
        );
        expect(body.error.details.errors[0].field, `${url}?${query}`).toBe(query.split('=')[0]);
      }
      expect((await t.app.inject({ method: 'GET', url: `${url}?limit=200&offset=1000000`, headers })).statusCode).toBe(
        200,
      );
    }
  });
});

describe('timestamps are RFC 3339 in years 1 to 9999 (UTC), so every answer can echo them', () => {
  it('refuses year 0, years past 9999 after the offset, impossible dates and leap seconds', async () => {
    for (const value of [
      '0000-01-01T00:00:00Z',
      '9999-12-31T23:59:59-14:00',
      '2024-02-30T00:00:00Z',
      '2024-01-01T23:59:60Z',
      '2024-01-01',
    ]) {
      let body = expectRefusal(
        await t.app.inject({
          method: 'GET',
          url: `/api/v1/runs?updated_since=${encodeURIComponent(value)}`,
          headers: apiHeaders(),
        }),
        400,
        'INVALID_REQUEST',
      );
      expect(body.error.details.errors[0].field).toBe('updated_since');
      body = expectRefusal(
        await t.admin('POST', `/vehicles/${vehicleId}/service-entries`, { type: 'oil_change', performed_at: value }),
        400,
        'INVALID_REQUEST',
      );
      expect(body.error.details.errors[0].field).toBe('performed_at');
    }
    for (const value of ['0001-01-01T00:00:00Z', '9999-12-31T23:59:59Z', '2024-01-01T00:00:00.123456789+14:00']) {
      const response = await t.api('GET', `/runs?updated_since=${encodeURIComponent(value)}`, acme.key);
      expect(response.statusCode, value).toBe(200);
    }
  });
});

describe('bodies', () => {
  const bodyRoutes = () => [
    { method: 'PUT' as const, url: `/api/v1/vehicles/${vehicleId}`, headers: apiHeaders() },
    { method: 'POST' as const, url: '/api/v1/webhook-subscriptions', headers: apiHeaders() },
    { method: 'POST' as const, url: `/api/v1/vehicles/${vehicleId}/refresh`, headers: apiHeaders() },
    { method: 'POST' as const, url: '/admin/v1/companies', headers: adminHeaders },
    { method: 'PATCH' as const, url: `/admin/v1/companies/${acme.id}`, headers: adminHeaders },
    { method: 'POST' as const, url: `/admin/v1/companies/${acme.id}/service-requests`, headers: adminHeaders },
    { method: 'PUT' as const, url: `/admin/v1/companies/${acme.id}/health-config`, headers: adminHeaders },
    { method: 'POST' as const, url: `/admin/v1/runs/${runId}/propose`, headers: adminHeaders },
  ];

  it('null, an array, a string or a number answer 400 INVALID_REQUEST with details.errors', async () => {
    for (const route of bodyRoutes()) {
      for (const payload of ['null', '[]', '[{"name":"x"}]', '"name"', '42', 'true']) {
        const body = expectRefusal(
          await t.app.inject({ ...route, headers: { ...route.headers, 'content-type': 'application/json' }, payload }),
          400,
          'INVALID_REQUEST',
        );
        expect(body.error.details.errors).toEqual([{ field: 'body', message: 'must be a JSON object' }]);
      }
    }
  });

  it('malformed JSON, invalid UTF-8, deep nesting, NUL, lone surrogates and a wrong content type answer 400', async () => {
    const payloads: Array<[string | Buffer, string]> = [
      ['{"name":', 'is not valid JSON'],
      ['{"name":"x",}', 'is not valid JSON'],
      [Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]), 'is not valid UTF-8'],
      ['{"name":' + '{"a":'.repeat(40) + '1' + '}'.repeat(40) + '}', 'nests deeper than 32 levels'],
      ['{"name":"Van\\u00001"}', 'must not contain NUL characters'],
      ['{"name":"\\udc00"}', 'must be well-formed Unicode (a lone surrogate)'],
      ['{"__proto__":{"name":"x"}}', 'is not allowed'],
    ];
    for (const route of bodyRoutes()) {
      for (const [payload, message] of payloads) {
        const body = expectRefusal(
          await t.app.inject({ ...route, headers: { ...route.headers, 'content-type': 'application/json' }, payload }),
          400,
          'INVALID_REQUEST',
        );
        expect(body.error.details.errors[0].message).toBe(message);
      }
      for (const contentType of [
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
      ]) {
        const body = expectRefusal(
          await t.app.inject({
            ...route,
            headers: { ...route.headers, 'content-type': contentType },
            payload: 'name=x',
          }),
          400,
          'INVALID_REQUEST',
        );
        expect(body.error.details.errors[0].field).toBe('content-type');
      }
    }
    // Nothing was written by any of them.
    const vehicle = (await t.api('GET', `/vehicles/${vehicleId}`, acme.key)).json().data;
    expect(vehicle.name).toBe('Van 1');
  });

  it('a body-taking route called without a body validates `{}`: required fields are named, never a crash', async () => {
    let body = expectRefusal(
      await t.app.inject({ method: 'PUT', url: `/api/v1/vehicles/${vehicleId}`, headers: apiHeaders() }),
      400,
      'INVALID_REQUEST',
    );
    expect(body.error.details.errors[0].field).toBe('body');
    body = expectRefusal(
      await t.app.inject({ method: 'POST', url: '/api/v1/webhook-subscriptions', headers: apiHeaders() }),
      400,
      'INVALID_REQUEST',
    );
    expect(body.error.details.errors.map((e: { field: string }) => e.field).sort()).toEqual(['events', 'url']);
    body = expectRefusal(
      await t.app.inject({
        method: 'POST',
        url: `/api/v1/webhook-subscriptions`,
        headers: { ...apiHeaders(), 'content-type': 'application/json' },
        payload: '',
      }),
      400,
      'INVALID_REQUEST',
    );
    // An empty JSON body is no body.
    expect(body.error.details.errors.map((e: { field: string }) => e.field).sort()).toEqual(['events', 'url']);
    // Defaults still apply to the body the handler reads.
    const key = await t.app.inject({
      method: 'POST',
      url: `/admin/v1/companies/${acme.id}/api-keys`,
      headers: adminHeaders,
    });
    expect(key.statusCode).toBe(201);
    expect(key.json().data.name).toBeNull();
  });

  it('strings over their limit, unknown fields and wrong types answer 400 naming the field', async () => {
    const cases: Array<[string, string, unknown, string]> = [
      ['PUT', `/api/v1/vehicles/${vehicleId}`, { name: 'x'.repeat(201) }, 'name'],
      ['PUT', `/api/v1/vehicles/${vehicleId}`, { license_plate: 'x'.repeat(33) }, 'license_plate'],
      ['PUT', `/api/v1/vehicles/${vehicleId}`, { odometer_miles: '12' }, 'odometer_miles'],
      ['PUT', `/api/v1/vehicles/${vehicleId}`, { odometer_miles: 1e300 }, 'odometer_miles'],
      ['PUT', `/api/v1/vehicles/${vehicleId}`, { vin: '1HGCM82633A004352' }, 'vin'],
      [
        'POST',
        '/api/v1/webhook-subscriptions',
        { url: `https://e.com/${'x'.repeat(2048)}`, events: ['run.created'] },
        'url',
      ],
    ];
    for (const [method, url, payload, field] of cases) {
      const body = expectRefusal(
        await t.app.inject({ method: method as 'PUT', url, headers: apiHeaders(), payload: payload as object }),
        400,
        'INVALID_REQUEST',
      );
      expect(body.error.details.errors[0].field, JSON.stringify(payload).slice(0, 50)).toBe(field);
    }
    const admin: Array<[string, string, unknown, string]> = [
      ['POST', '/companies', { name: 'A', external_ids: { ['k'.repeat(101)]: 'v' } }, 'external_ids'],
      [
        'POST',
        '/companies',
        { name: 'A', external_ids: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, 'v'])) },
        'external_ids',
      ],
      [
        'POST',
        `/companies/${acme.id}/service-requests`,
        { vehicle_id: vehicleId, items: Array.from({ length: 101 }, () => ({ title: 't', type: 'service' })) },
        'items',
      ],
      [
        'POST',
        `/companies/${acme.id}/service-requests`,
        { vehicle_id: vehicleId, customer: { name: 'n'.repeat(201) } },
        'customer.name',
      ],
      [
        'POST',
        `/companies/${acme.id}/vehicles`,
        { name: 'v', home_location: { street_1: 's'.repeat(201) } },
        'home_location.street_1',
      ],
      [
        'PUT',
        `/companies/${acme.id}/health-config`,
        { maintenance: { 'Not A Type': { intervalMiles: 5000 } } },
        'maintenance',
      ],
      [
        'POST',
        `/runs/${runId}/dispatch-proposal`,
        { assignee: { type: 'shop', id: 'i', name: 'n' }, reason: 'r'.repeat(4001) },
        'reason',
      ],
    ];
    for (const [method, url, payload, field] of admin) {
      const body = expectRefusal(await t.admin(method as 'POST', url, payload), 400, 'INVALID_REQUEST');
      expect(body.error.details.errors[0].field, url).toBe(field);
    }
  });
});

describe('URLs', () => {
  it('bad percent-encoding, NUL and over-long path segments answer 400 with the envelope and a request id', async () => {
    for (const url of [
      '/api/v1/runs/%E0%A4%A',
      '/api/v1/%',
      '/admin/v1/companies/%zz',
      '/docs/static/%E0%A4%A',
      `/api/v1/runs/${'a'.repeat(101)}`,
      `/api/v1/vehicles/${'%41'.repeat(200)}`,
      '/api/v1/runs/%00',
      '/api/v1/runs?updated_since=%00',
      '/api/v1/runs?status=%ED%A0%80',
    ]) {
      const response = await t.app.inject({ method: 'GET', url, headers: apiHeaders() });
      expectRefusal(response, 400, 'INVALID_REQUEST');
      expect(response.headers['x-request-id'], url).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('unknown routes and methods answer 404 NOT_FOUND', async () => {
    for (const [method, url] of [
      ['OPTIONS', '/api/v1/runs'],
      ['PATCH', '/api/v1/runs'],
      ['DELETE', `/api/v1/vehicles/${vehicleId}`],
      ['PROPFIND', '/api/v1/vehicles'],
      ['GET', '/api/v1/runs/x/y/z'],
      ['GET', '/admin/v2/companies'],
      ['POST', '/ingest/v1'],
    ] as const) {
      // PROPFIND is a method Node parses but fastify's types do not list.
      expectRefusal(await t.app.inject({ method: method as 'GET', url, headers: apiHeaders() }), 404, 'NOT_FOUND');
    }
  });
});

/** Sends raw bytes to the listening app and reads the whole answer. */
function rawRequest(port: number, bytes: string | Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.on('error', (err) => (chunks.length > 0 ? resolve(Buffer.concat(chunks).toString('utf8')) : reject(err)));
    socket.write(bytes);
  });
}

describe('HTTP that never reaches a route', () => {
  it('oversized headers, unknown methods and garbage answer the envelope on the socket', async () => {
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = Number(new URL(address).port);
    const cases: Array<[string, number, string]> = [
      [`GET /api/v1/runs HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'HEADERS_TOO_LARGE'],
      ['FOO /api/v1/runs HTTP/1.1\r\nHost: x\r\n\r\n', 400, 'INVALID_REQUEST'],
      ['\x00\x01\x02 garbage\r\n\r\n', 400, 'INVALID_REQUEST'],
      ['GET /api/v1/runs HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n', 400, 'INVALID_REQUEST'],
      ['GET /api/v1/runs HTTP/1.1\r\nHo st: x\r\n\r\n', 400, 'INVALID_REQUEST'],
    ];
    for (const [bytes, status, code] of cases) {
      const answer = await rawRequest(port, bytes);
      expect(answer.split('\r\n')[0], bytes.slice(0, 30)).toBe(
        `HTTP/1.1 ${status} ${status === 431 ? 'Request Header Fields Too Large' : 'Bad Request'}`,
      );
      const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
      expect(body).toMatchObject({ success: false, error: { code }, meta: { version: '1.0.0' } });
    }
  });
});

describe('schemas', () => {
  /** Every string, number, array and map reachable in `schema`, with its path. */
  function unbounded(schema: any, path: string, found: string[]): void {
    if (!schema || typeof schema !== 'object') return;
    for (const branch of [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])]) {
      unbounded(branch, path, found);
    }
    const types = [schema.type].flat();
    if (types.includes('string') && schema.maxLength === undefined) found.push(`${path}: string without maxLength`);
    if (
      (types.includes('number') || types.includes('integer')) &&
      (schema.maximum === undefined || schema.minimum === undefined)
    ) {
      found.push(`${path}: number without minimum and maximum`);
    }
    if (types.includes('array')) {
      if (schema.maxItems === undefined) found.push(`${path}: array without maxItems`);
      unbounded(schema.items, `${path}[]`, found);
    }
    if (types.includes('object')) {
      const open = schema.additionalProperties !== false || schema.patternProperties;
      if (open && schema.maxProperties === undefined) found.push(`${path}: open object without maxProperties`);
      if (open && schema.propertyNames?.maxLength === undefined && schema.additionalProperties !== false) {
        found.push(`${path}: open object without a bound on key length`);
      }
      for (const [key, value] of Object.entries<any>(schema.properties ?? {}))
        unbounded(value, `${path}.${key}`, found);
      for (const value of Object.values<any>(schema.patternProperties ?? {})) unbounded(value, `${path}.*`, found);
      if (typeof schema.additionalProperties === 'object') unbounded(schema.additionalProperties, `${path}.*`, found);
    }
  }

  it('bound every input of every public, operator and ingest route: strings, numbers, arrays and maps', async () => {
    const doc = (await t.app.inject('/openapi.json')).json();
    const found: string[] = [];
    let inputs = 0;
    for (const [path, operations] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const [method, operation] of Object.entries<any>(operations)) {
        for (const parameter of operation.parameters ?? []) {
          inputs++;
          unbounded(parameter.schema, `${method.toUpperCase()} ${path} ${parameter.in}:${parameter.name}`, found);
        }
        const body = operation.requestBody?.content?.['application/json']?.schema;
        if (body) {
          inputs++;
          unbounded(body, `${method.toUpperCase()} ${path} body`, found);
        }
      }
    }
    expect(inputs).toBeGreaterThan(50);
    expect(found).toEqual([]);
  });
});
