import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let fleet: { id: string; key: string };
let other: { id: string; key: string };
const runIds: Record<string, string> = {};

const runFields = [
  'id',
  'title',
  'description',
  'status',
  'scheduling_state',
  'scheduling_status',
  'reference_code',
  'created_at',
  'updated_at',
  'appointment',
  'appointment_time',
  'customer_requested_time',
  'customer',
  'vehicle',
  'items',
];

async function openRun(companyId: string, label: string, extra: Record<string, unknown> = {}): Promise<string> {
  const vehicle = await t.createVehicle(companyId, { name: label, license_plate: `PL-${label}` });
  const response = await t.admin('POST', `/companies/${companyId}/service-requests`, {
    vehicle_id: vehicle.id,
    title: `Service ${label}`,
    items: [{ title: 'Oil change', type: 'service' }],
    ...extra,
  });
  expect(response.statusCode).toBe(201);
  return response.json().data.run.id;
}

beforeAll(async () => {
  t = await createTestApp();
  fleet = await t.createCompany('Fleet');
  other = await t.createCompany('Other');
  runIds.requested = await openRun(fleet.id, 'requested', {
    description: 'Noise from the front axle',
    customer: {
      name: 'Ana Maria Lopez',
      email: 'ana@example.com',
      phone: '+1 555 0100',
      address: { street: '1 Main St', city: 'Springfield', state: 'IL', postal_code: '62701' },
      display_address: '1 Main St, Springfield, IL 62701',
    },
    preferred_start: '2026-12-01T08:00:00Z',
    preferred_end: '2026-12-01T12:00:00Z',
  });
  runIds.proposed = await openRun(fleet.id, 'proposed');
  await t.admin('POST', `/runs/${runIds.proposed}/propose`, {
    start: '2026-12-02T09:00:00Z',
    end: '2026-12-02T10:00:00Z',
  });
  runIds.confirmed = await openRun(fleet.id, 'confirmed');
  await t.admin('POST', `/runs/${runIds.confirmed}/confirm`, {
    start: '2026-12-03T09:00:00Z',
    end: '2026-12-03T10:00:00Z',
  });
  runIds.cancelled = await openRun(fleet.id, 'cancelled');
  await t.admin('POST', `/runs/${runIds.cancelled}/cancel`);
  runIds.completed = await openRun(fleet.id, 'completed');
  await t.admin('POST', `/runs/${runIds.completed}/complete`);
  runIds.inProgress = await openRun(fleet.id, 'in-progress');
  await t.admin('POST', `/runs/${runIds.inProgress}/start`);
  runIds.dismissed = await openRun(fleet.id, 'dismissed');
  await t.admin('POST', `/runs/${runIds.dismissed}/dismiss`);
  runIds.foreign = await openRun(other.id, 'foreign');
});
afterAll(() => t.close());

async function list(query = '', key = fleet.key) {
  const response = await t.api('GET', `/runs${query}`, key);
  expect(response.statusCode, query).toBe(200);
  return response.json();
}

describe('GET /runs/{id}', () => {
  it('returns every Run field of the spec, items always an array', async () => {
    const response = await t.api('GET', `/runs/${runIds.requested}`, fleet.key);
    expect(response.statusCode).toBe(200);
    const run = response.json().data;
    expect(Object.keys(run).sort()).toEqual([...runFields].sort());
    expect(run).toMatchObject({
      id: runIds.requested,
      title: 'Service requested',
      description: 'Noise from the front axle',
      status: 'open',
      scheduling_state: 'requested',
      scheduling_status: 'pending',
      appointment: {
        preferred_start: '2026-12-01T08:00:00.000Z',
        preferred_end: '2026-12-01T12:00:00.000Z',
        start: null,
        end: null,
        confirmed_at: null,
      },
      customer_requested_time: {
        preferred_start: '2026-12-01T08:00:00.000Z',
        preferred_end: '2026-12-01T12:00:00.000Z',
      },
      appointment_time: null,
      customer: {
        name: 'Ana Maria Lopez',
        email: 'ana@example.com',
        phone: '+1 555 0100',
        address: { street: '1 Main St', city: 'Springfield', state: 'IL', postal_code: '62701' },
        display_address: '1 Main St, Springfield, IL 62701',
      },
      vehicle: { license_plate: 'PL-requested', make: 'Ford', model: 'Transit', vin: '1HGCM82633A004352', year: 2022 },
      items: [{ title: 'Oil change', description: null, status: 'pending', type: 'service' }],
    });
    expect(run.reference_code).toMatch(/^R-[0-9A-HJKMNP-TV-Z]{8}$/);
  });

  it('computes the deprecated scheduling_status from scheduling_state', async () => {
    const expected: Record<string, [string, string | null]> = {
      requested: ['requested', 'pending'],
      proposed: ['proposed', 'proposed'],
      confirmed: ['confirmed', 'confirmed'],
      cancelled: ['cancelled', null],
    };
    for (const [label, [state, status]] of Object.entries(expected)) {
      const run = (await t.api('GET', `/runs/${runIds[label]}`, fleet.key)).json().data;
      expect([run.scheduling_state, run.scheduling_status]).toEqual([state, status]);
    }
  });

  it("404 for another company's run, an unknown id and a non-UUID", async () => {
    for (const id of [runIds.foreign, '00000000-0000-4000-8000-000000000001', 'R-123']) {
      const response = await t.api('GET', `/runs/${id}`, fleet.key);
      expect(response.statusCode).toBe(404);
      expect(response.json()).toMatchObject({ success: false, error: { code: 'NOT_FOUND', message: 'run not found' } });
    }
  });
});

describe('GET /runs', () => {
  it("lists the caller's runs newest activity first, with meta.total", async () => {
    const body = await list();
    expect(body.data.map((r: { id: string }) => r.id)).not.toContain(runIds.foreign);
    expect(body.meta).toMatchObject({ limit: 50, offset: 0, total: 7, version: '1.0.0' });
    const times = body.data.map((r: { updated_at: string }) => Date.parse(r.updated_at));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    for (const run of body.data) expect(Array.isArray(run.items)).toBe(true);
  });

  it('filters by status and scheduling_state', async () => {
    expect((await list('?status=completed')).data.map((r: { id: string }) => r.id)).toEqual([runIds.completed]);
    expect((await list('?status=in_progress')).data.map((r: { id: string }) => r.id)).toEqual([runIds.inProgress]);
    expect((await list('?scheduling_state=confirmed')).data.map((r: { id: string }) => r.id)).toEqual([
      runIds.confirmed,
    ]);
    const cancelled = (await list('?scheduling_state=cancelled')).data.map((r: { id: string }) => r.id).sort();
    expect(cancelled).toEqual([runIds.cancelled, runIds.dismissed].sort());
    expect((await list('?status=open&scheduling_state=proposed')).meta.total).toBe(1);
  });

  it('maps the deprecated scheduling_status filter, including same_day_requested → requested', async () => {
    const requested = (await list('?scheduling_state=requested')).data.map((r: { id: string }) => r.id);
    expect(requested.length).toBeGreaterThan(0);
    expect((await list('?scheduling_status=pending')).data.map((r: { id: string }) => r.id)).toEqual(requested);
    expect((await list('?scheduling_status=same_day_requested')).data.map((r: { id: string }) => r.id)).toEqual(
      requested,
    );
    expect((await list('?scheduling_status=proposed')).data.map((r: { id: string }) => r.id)).toEqual([
      runIds.proposed,
    ]);
    expect((await list('?scheduling_status=confirmed')).data.map((r: { id: string }) => r.id)).toEqual([
      runIds.confirmed,
    ]);
    expect(
      (await list('?scheduling_status=pending&scheduling_state=requested')).data.map((r: { id: string }) => r.id),
    ).toEqual(requested);
    const contradiction = await t.api('GET', '/runs?scheduling_status=pending&scheduling_state=confirmed', fleet.key);
    expect(contradiction.statusCode).toBe(400);
    expect(contradiction.json().error.details.errors[0].field).toBe('scheduling_status');
  });

  it('pages newest-first through every offset without gaps or repeats, with a stable tie-break', async () => {
    // Two runs share one updated_at: the id breaks the tie the same way on every page.
    await t.pool.query(`UPDATE runs SET updated_at = '2026-11-20T10:00:00Z' WHERE id = ANY($1)`, [
      [runIds.proposed, runIds.confirmed],
    ]);
    const full = (await list('?limit=200')).data.map((r: { id: string }) => r.id);
    for (const limit of [1, 2, 3, 4]) {
      const paged: string[] = [];
      for (let offset = 0; offset < full.length + limit; offset += limit) {
        const body = await list(`?limit=${limit}&offset=${offset}`);
        expect(body.meta).toMatchObject({ limit, offset, total: 7 });
        paged.push(...body.data.map((r: { id: string }) => r.id));
      }
      expect(paged).toEqual(full);
    }
  });

  it('updated_since is inclusive and combines with paging', async () => {
    await t.pool.query(`UPDATE runs SET updated_at = '2026-11-21T10:00:00.500Z' WHERE id = $1`, [runIds.completed]);
    await t.pool.query(`UPDATE runs SET updated_at = '2026-11-19T00:00:00Z' WHERE company_id = $1 AND id <> $2`, [
      fleet.id,
      runIds.completed,
    ]);
    const cursor = '2026-11-21T10:00:00.500Z';
    const body = await list(`?updated_since=${cursor}`);
    expect(body.data.map((r: { id: string }) => r.id)).toEqual([runIds.completed]);
    expect(body.data[0].updated_at).toBe(cursor);
    expect((await list('?updated_since=2026-11-21T10:00:00.501Z')).data).toEqual([]);
    expect((await list('?updated_since=2026-11-19T00:00:00Z&limit=2&offset=6')).meta.total).toBe(7);
  });

  it('answers 400 INVALID_REQUEST naming each bad parameter', async () => {
    const cases: Array<[string, string]> = [
      ['status=closed', 'status'],
      ['scheduling_state=pending', 'scheduling_state'],
      ['scheduling_status=cancelled', 'scheduling_status'],
      ['limit=0', 'limit'],
      ['limit=201', 'limit'],
      ['limit=1.5', 'limit'],
      ['offset=-1', 'offset'],
      ['offset=x', 'offset'],
      ['updated_since=2026-13-45T00:00:00Z', 'updated_since'],
      ['updated_since=2016-12-31T23:59:60Z', 'updated_since'],
      ['sort=asc', 'sort'],
    ];
    for (const [query, field] of cases) {
      const response = await t.api('GET', `/runs?${query}`, fleet.key);
      expect(response.statusCode, query).toBe(400);
      expect(response.json()).toMatchObject({ success: false, error: { code: 'INVALID_REQUEST' } });
      expect(
        response.json().error.details.errors.map((e: { field: string }) => e.field),
        query,
      ).toContain(field);
    }
  });
});
