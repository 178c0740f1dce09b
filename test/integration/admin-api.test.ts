import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let acme: { id: string; key: string };

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.createCompany('Acme');
});
afterAll(() => t.close());

describe('companies', () => {
  it('creates with 201 and external ids, lists and gets', async () => {
    const created = await t.admin('POST', '/companies', { name: 'Initech', external_ids: { shopmonkey: 'cus_42' } });
    expect(created.statusCode).toBe(201);
    const company = created.json().data;
    expect(company).toMatchObject({ name: 'Initech', external_ids: { shopmonkey: 'cus_42' } });
    expect((await t.admin('GET', `/companies/${company.id}`)).json().data).toEqual(company);
    expect((await t.admin('GET', '/companies?limit=200')).json().data.map((c: { id: string }) => c.id)).toContain(
      company.id,
    );
  });

  it('400 for a missing name or unknown field; 404 for an unknown company', async () => {
    expect((await t.admin('POST', '/companies', {})).statusCode).toBe(400);
    expect((await t.admin('POST', '/companies', { name: '' })).statusCode).toBe(400);
    expect((await t.admin('POST', '/companies', { name: 'x', plan: 'gold' })).statusCode).toBe(400);
    expect((await t.admin('GET', '/companies/00000000-0000-4000-8000-000000000000')).statusCode).toBe(404);
    expect((await t.admin('POST', '/companies/00000000-0000-4000-8000-000000000000/api-keys', {})).statusCode).toBe(
      404,
    );
  });

  it('creates an API key without a body too', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: `/admin/v1/companies/${acme.id}/api-keys`,
      headers: { authorization: 'Bearer test-admin-token-0123456789' },
    });
    expect(response.statusCode).toBe(201);
    expect(response.json().data.key).toMatch(/^fk_[A-Za-z0-9_-]{43}$/);
  });
});

describe('vehicles', () => {
  it('creates with a home location and provider; PATCH keeps absent fields and clears nulls', async () => {
    const created = await t.createVehicle(acme.id, {
      telematics_provider: 'geotab',
      provider_vehicle_id: 'b2A',
      home_location: {
        name: 'North yard',
        street_1: '9 Depot Rd',
        city: 'Joliet',
        state: 'IL',
        postal_code: '60431',
        country: 'US',
      },
    });
    expect(created).toMatchObject({
      active: true,
      provider_vehicle_id: 'b2A',
      company_id: acme.id,
      link_broken: { reason: 'no_reading' },
    });
    expect(created.home_location_id).toMatch(/^[0-9a-f-]{36}$/);
    const patched = (await t.admin('PATCH', `/vehicles/${created.id}`, { name: 'Renamed', license_plate: null })).json()
      .data;
    expect(patched).toMatchObject({
      name: 'Renamed',
      license_plate: null,
      make: 'Ford',
      telematics_provider: 'geotab',
    });
    // Restating the same provider keeps the link state; changing it starts over.
    await t.pool.query(`UPDATE vehicles SET link_broken = NULL WHERE id = $1`, [created.id]);
    const same = (await t.admin('PATCH', `/vehicles/${created.id}`, { telematics_provider: 'geotab' })).json().data;
    expect(same.link_broken).toBeNull();
    const manual = (await t.admin('PATCH', `/vehicles/${created.id}`, { telematics_provider: null })).json().data;
    expect(manual).toMatchObject({ telematics_provider: null, link_broken: null });
    const samsara = (await t.admin('PATCH', `/vehicles/${created.id}`, { telematics_provider: 'samsara' })).json().data;
    expect(samsara.link_broken).toEqual({ reason: 'no_reading', since: null, tracker_km: null });
  });

  it('validates the body: VIN format, year range, provider name, empty patch', async () => {
    for (const body of [
      { vin: 'IOQ45678901234567' },
      { vin: 'SHORT' },
      { year: 1850 },
      { telematics_provider: 'teslamate' },
    ]) {
      const response = await t.admin('POST', `/companies/${acme.id}/vehicles`, body);
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
    }
    const vehicle = await t.createVehicle(acme.id);
    expect((await t.admin('PATCH', `/vehicles/${vehicle.id}`, {})).statusCode).toBe(400);
  });

  it('deactivation hides the vehicle from the public API; operators still list it', async () => {
    const vehicle = await t.createVehicle(acme.id, { name: 'Retiring' });
    const response = await t.admin('DELETE', `/vehicles/${vehicle.id}`);
    expect(response.statusCode).toBe(200);
    expect(response.json().data.active).toBe(false);
    expect((await t.api('GET', `/vehicles/${vehicle.id}`, acme.key)).statusCode).toBe(404);
    const listed = (await t.admin('GET', `/companies/${acme.id}/vehicles?limit=200`)).json().data;
    expect(listed.find((v: { id: string }) => v.id === vehicle.id)?.active).toBe(false);
    expect((await t.admin('DELETE', '/vehicles/00000000-0000-4000-8000-000000000000')).statusCode).toBe(404);
  });
});

describe('service entries', () => {
  it("lists a vehicle's entries newest first, in miles, and only that vehicle's; 404 for an unknown vehicle", async () => {
    const vehicle = await t.createVehicle(acme.id);
    const neighbour = await t.createVehicle(acme.id);
    const record = async (vehicleId: string, body: Record<string, unknown>) => {
      const response = await t.admin('POST', `/vehicles/${vehicleId}/service-entries`, body);
      expect(response.statusCode, response.body).toBe(201);
      return response.json().data;
    };
    const older = await record(vehicle.id, {
      type: 'oil_change',
      performed_at: '2026-03-01T08:00:00Z',
      odometer_miles: 41_250.5,
      notes: 'synthetic 5W-30',
    });
    const newer = await record(vehicle.id, { type: 'tire_rotation', performed_at: '2026-09-15T14:30:00Z' });
    await record(neighbour.id, { type: 'oil_change', performed_at: '2026-10-01T08:00:00Z' });

    const listed = await t.admin('GET', `/vehicles/${vehicle.id}/service-entries`);
    expect(listed.statusCode).toBe(200);
    expect(listed.json().data).toEqual([newer, older]);
    expect(older).toEqual({
      id: expect.any(String),
      vehicle_id: vehicle.id,
      type: 'oil_change',
      performed_at: '2026-03-01T08:00:00.000Z',
      odometer_miles: 41_250.5,
      notes: 'synthetic 5W-30',
      created_at: expect.any(String),
    });
    expect(newer).toMatchObject({ odometer_miles: null, notes: null });

    expect((await t.admin('GET', '/vehicles/00000000-0000-4000-8000-000000000000/service-entries')).statusCode).toBe(
      404,
    );
    expect((await t.admin('GET', '/vehicles/nope/service-entries')).statusCode).toBe(404);
    const anonymous = await t.app.inject({ method: 'GET', url: `/admin/v1/vehicles/${vehicle.id}/service-entries` });
    expect(anonymous.statusCode).toBe(401);
  });
});

describe('service requests', () => {
  it('creates a run (201) and folds a second request for the same vehicle into it (200)', async () => {
    const vehicle = await t.createVehicle(acme.id);
    const first = await t.admin('POST', `/companies/${acme.id}/service-requests`, {
      vehicle_id: vehicle.id,
      title: 'Brakes squeal',
      items: [{ title: 'Brake inspection', type: 'inspection' }],
    });
    expect(first.statusCode).toBe(201);
    const run = first.json().data.run;
    expect(first.json().data.folded).toBe(false);
    expect(run).toMatchObject({
      status: 'open',
      scheduling_state: 'requested',
      scheduling_status: 'pending',
      vehicle: { id: vehicle.id },
    });

    const second = await t.admin('POST', `/companies/${acme.id}/service-requests`, {
      vehicle_id: vehicle.id,
      title: 'Oil due',
      items: [
        { title: 'Oil change', type: 'service' },
        { title: 'brake inspection', type: 'inspection' },
      ],
    });
    expect(second.statusCode).toBe(200);
    expect(second.json().data.folded).toBe(true);
    expect(second.json().data.run.id).toBe(run.id);
    expect(second.json().data.run.items.map((i: { title: string }) => i.title)).toEqual([
      'Brake inspection',
      'Oil change',
    ]);
    const { rows } = await t.pool.query('SELECT count(*)::int AS n FROM runs WHERE vehicle_id = $1', [vehicle.id]);
    expect(rows[0].n).toBe(1);
  });

  it('folds into an in-progress run too; after completion a new request opens a new run', async () => {
    const vehicle = await t.createVehicle(acme.id);
    const request = { vehicle_id: vehicle.id, items: [{ title: 'Tire rotation', type: 'service' }] };
    const runId = (await t.admin('POST', `/companies/${acme.id}/service-requests`, request)).json().data.run.id;
    await t.admin('POST', `/runs/${runId}/start`);
    expect((await t.admin('POST', `/companies/${acme.id}/service-requests`, request)).json().data).toMatchObject({
      folded: true,
      run: { id: runId },
    });
    await t.admin('POST', `/runs/${runId}/complete`);
    const next = await t.admin('POST', `/companies/${acme.id}/service-requests`, request);
    expect(next.statusCode).toBe(201);
    expect(next.json().data.run.id).not.toBe(runId);
  });

  it('concurrent requests for one vehicle open exactly one run', async () => {
    const vehicle = await t.createVehicle(acme.id);
    const responses = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        t.admin('POST', `/companies/${acme.id}/service-requests`, {
          vehicle_id: vehicle.id,
          items: [{ title: `Item ${i}`, type: 'service' }],
        }),
      ),
    );
    expect(responses.map((r) => r.statusCode).sort()).toEqual([200, 200, 200, 200, 200, 201]);
    const { rows } = await t.pool.query('SELECT items FROM runs WHERE vehicle_id = $1', [vehicle.id]);
    expect(rows).toHaveLength(1);
    expect(rows[0].items).toHaveLength(6);
  });

  it("404 for an unknown vehicle or another company's vehicle; 409 for a deactivated one; 400 for bad bodies", async () => {
    const other = await t.createCompany('Other');
    const foreign = await t.createVehicle(other.id);
    for (const vehicleId of [foreign.id, '00000000-0000-4000-8000-000000000000']) {
      const response = await t.admin('POST', `/companies/${acme.id}/service-requests`, {
        vehicle_id: vehicleId,
        items: [],
      });
      expect(response.statusCode).toBe(404);
    }
    const retired = await t.createVehicle(acme.id);
    await t.admin('DELETE', `/vehicles/${retired.id}`);
    expect(
      (await t.admin('POST', `/companies/${acme.id}/service-requests`, { vehicle_id: retired.id, items: [] }))
        .statusCode,
    ).toBe(409);
    for (const body of [
      { items: [] },
      { vehicle_id: 'x', items: [] },
      { vehicle_id: retired.id, items: [{ title: 'no type' }] },
      { vehicle_id: retired.id, items: [], customer: { email: 'not-an-email' } },
    ]) {
      expect(
        (await t.admin('POST', `/companies/${acme.id}/service-requests`, body)).statusCode,
        JSON.stringify(body),
      ).toBe(400);
    }
  });

  it('matches the customer contact by email across requests', async () => {
    const customer = { name: 'Bo Diddley', email: 'Bo@Example.com' };
    for (let i = 0; i < 2; i++) {
      const vehicle = await t.createVehicle(acme.id);
      await t.admin('POST', `/companies/${acme.id}/service-requests`, {
        vehicle_id: vehicle.id,
        items: [],
        customer: { ...customer, email: i ? 'bo@example.com' : customer.email },
      });
    }
    const { rows } = await t.pool.query(
      `SELECT count(DISTINCT contact_id)::int AS n FROM runs WHERE customer->>'name' = 'Bo Diddley'`,
    );
    expect(rows[0].n).toBe(1);
  });
});

describe('run operations', () => {
  async function newRun(): Promise<string> {
    const vehicle = await t.createVehicle(acme.id);
    return (
      await t.admin('POST', `/companies/${acme.id}/service-requests`, { vehicle_id: vehicle.id, items: [] })
    ).json().data.run.id;
  }

  it('moves a run through propose → confirm → start → complete → reopen, visible in the public API', async () => {
    const runId = await newRun();
    const proposed = (
      await t.admin('POST', `/runs/${runId}/propose`, { start: '2026-12-05T09:00:00Z', end: '2026-12-05T11:00:00Z' })
    ).json().data;
    expect(proposed).toMatchObject({
      scheduling_state: 'proposed',
      appointment: { start: '2026-12-05T09:00:00.000Z', end: '2026-12-05T11:00:00.000Z', confirmed_at: null },
    });
    const confirmed = (await t.admin('POST', `/runs/${runId}/confirm`)).json().data;
    expect(confirmed.scheduling_state).toBe('confirmed');
    expect(confirmed.appointment.confirmed_at).not.toBeNull();
    expect((await t.admin('POST', `/runs/${runId}/start`)).json().data.status).toBe('in_progress');
    expect((await t.admin('POST', `/runs/${runId}/complete`)).json().data.status).toBe('completed');
    expect((await t.admin('POST', `/runs/${runId}/reopen`)).json().data.status).toBe('open');
    const publicView = (await t.api('GET', `/runs/${runId}`, acme.key)).json().data;
    expect(publicView).toMatchObject({ status: 'open', scheduling_state: 'confirmed' });
  });

  it('illegal moves answer 409 INVALID_STATE_TRANSITION and change nothing', async () => {
    const runId = await newRun();
    const view = async () => (await t.api('GET', `/runs/${runId}`, acme.key)).json().data;
    const before = await view();
    for (const path of ['reopen', 'confirm']) {
      const response = await t.admin('POST', `/runs/${runId}/${path}`);
      expect(response.statusCode, path).toBe(409);
      expect(response.json().error.code).toBe('INVALID_STATE_TRANSITION');
      expect(await view()).toEqual(before);
    }
    await t.admin('POST', `/runs/${runId}/dismiss`);
    const dismissed = await view();
    expect(dismissed).toMatchObject({ status: 'dismissed', scheduling_state: 'cancelled' });
    const refused = await t.admin('POST', `/runs/${runId}/complete`);
    expect(refused.statusCode).toBe(409);
    expect(refused.json().error.message).toBe('cannot complete a run that is dismissed');
    expect(await view()).toEqual(dismissed);
  });

  it('reopening is refused while the vehicle has another open run', async () => {
    const vehicle = await t.createVehicle(acme.id);
    const request = { vehicle_id: vehicle.id, items: [] };
    const first = (await t.admin('POST', `/companies/${acme.id}/service-requests`, request)).json().data.run.id;
    await t.admin('POST', `/runs/${first}/complete`);
    const second = (await t.admin('POST', `/companies/${acme.id}/service-requests`, request)).json().data.run.id;
    const refused = await t.admin('POST', `/runs/${first}/reopen`);
    expect(refused.statusCode).toBe(409);
    expect(refused.json().error.message).toBe('cannot reopen: the vehicle has another open run');
    await t.admin('POST', `/runs/${second}/dismiss`);
    expect((await t.admin('POST', `/runs/${first}/reopen`)).statusCode).toBe(200);
  });

  it('dispatch proposal is recorded; bodies are validated; unknown runs are 404', async () => {
    const runId = await newRun();
    const ok = await t.admin('POST', `/runs/${runId}/dispatch-proposal`, {
      assignee: { type: 'shop', id: 'shop-9', name: 'Quick Lube' },
      reason: 'nearest with capacity',
    });
    expect(ok.statusCode).toBe(200);
    expect(
      (
        await t.admin('POST', `/runs/${runId}/dispatch-proposal`, {
          assignee: { type: 'robot', id: 'r', name: 'R' },
          reason: 'x',
        })
      ).statusCode,
    ).toBe(400);
    expect((await t.admin('POST', `/runs/${runId}/propose`, { start: 'tomorrow' })).statusCode).toBe(400);
    expect(
      (await t.admin('POST', `/runs/${runId}/propose`, { start: '2026-12-05T11:00:00Z', end: '2026-12-05T09:00:00Z' }))
        .statusCode,
    ).toBe(409);
    expect((await t.admin('POST', '/runs/00000000-0000-4000-8000-000000000000/complete')).statusCode).toBe(404);
    expect((await t.admin('POST', '/runs/nope/complete')).statusCode).toBe(404);
  });
});

describe('provider connections', () => {
  const create = (host: string) =>
    t.app.inject({
      method: 'POST',
      url: `/admin/v1/companies/${acme.id}/provider-connections`,
      headers: { authorization: `Bearer ${t.config.adminToken}`, host },
      payload: { provider: 'generic', config: {} },
    });

  it('builds ingest_url from the Host header, and refuses a Host that is not a host (nothing created)', async () => {
    const good = await create('fleet.example.com:8443');
    expect(good.statusCode).toBe(201);
    expect(good.json().data.ingest_url).toBe(`http://fleet.example.com:8443/ingest/v1/generic/${good.json().data.id}`);
    const before = await t.pool.query(`SELECT count(*)::int AS n FROM provider_connections`);
    for (const host of ['a b', 'evil.example/x?', 'x@y', '[::1]:99999', '[1]']) {
      const bad = await create(host);
      expect(bad.statusCode).toBe(400);
      expect(bad.json().error.details.errors).toEqual([
        { field: 'host', message: 'the Host header is not a valid host' },
      ]);
    }
    expect((await t.pool.query(`SELECT count(*)::int AS n FROM provider_connections`)).rows).toEqual(before.rows);
  });
});
