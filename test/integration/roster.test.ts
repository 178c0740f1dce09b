/**
 * The dispatch roster in the operator API (docs/operator-api.md): add shops and technicians, list
 * them, take one off; the dispatch assistant (a real runs worker) proposes only active members.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let acme: { id: string; key: string };
const unknownId = '00000000-0000-4000-8000-000000000000';

beforeAll(async () => {
  t = await createTestApp();
  acme = await t.createCompany('Roster Co');
  await t.startWorkers(['runs']);
});
afterAll(() => t.close());

const roster = (companyId = acme.id) => t.admin('GET', `/companies/${companyId}/roster`);

/** A new run for an oil change, and its dispatch proposal (the run's column) once the assistant has looked at it. */
async function proposalForNewRun(): Promise<Record<string, any> | null> {
  const vehicle = await t.createVehicle(acme.id);
  const created = await t.admin('POST', `/companies/${acme.id}/service-requests`, {
    vehicle_id: vehicle.id,
    items: [{ title: 'Oil change', type: 'oil_change' }],
  });
  expect(created.statusCode, created.body).toBe(201);
  const runId = created.json().data.run.id;
  const checked = async () =>
    (await t.pool.query(`SELECT dispatch_checked_at, dispatch_proposal FROM runs WHERE id = $1`, [runId])).rows[0];
  await expect.poll(async () => (await checked()).dispatch_checked_at, { timeout: 15_000 }).not.toBeNull();
  return (await checked()).dispatch_proposal;
}

describe('dispatch roster', () => {
  it('adds members with 201 (capacity 5 and no location by default) and lists them by name', async () => {
    const shop = await t.admin('POST', `/companies/${acme.id}/roster`, {
      type: 'shop',
      name: 'Joliet Lube',
      skills: ['oil_change', 'tire_rotation'],
      latitude: 41.53,
      longitude: -88.09,
      capacity: 3,
    });
    expect(shop.statusCode).toBe(201);
    expect(shop.json()).toMatchObject({ success: true, meta: { version: '1.0.0' } });
    expect(shop.json().data).toEqual({
      id: expect.any(String),
      type: 'shop',
      name: 'Joliet Lube',
      skills: ['oil_change', 'tire_rotation'],
      latitude: 41.53,
      longitude: -88.09,
      capacity: 3,
      active: true,
    });
    const technician = (
      await t.admin('POST', `/companies/${acme.id}/roster`, { type: 'technician', name: 'Ada Brooks', skills: [] })
    ).json().data;
    expect(technician).toMatchObject({ latitude: null, longitude: null, capacity: 5, active: true });

    const listed = await roster();
    expect(listed.statusCode).toBe(200);
    expect(listed.json().data).toEqual([technician, shop.json().data]);
  });

  it('validates the body and answers 404 for an unknown company', async () => {
    const bad = [
      { type: 'robot', name: 'R2', skills: [] },
      { type: 'shop', name: '', skills: [] },
      { type: 'shop', name: 'No skills' },
      { type: 'shop', name: 'Far north', skills: [], latitude: 91 },
      { type: 'shop', name: 'Zero', skills: [], capacity: 0 },
      { type: 'shop', name: 'Extra', skills: [], rating: 5 },
    ];
    for (const body of bad) {
      const response = await t.admin('POST', `/companies/${acme.id}/roster`, body);
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      expect(response.json().error.code).toBe('INVALID_REQUEST');
    }
    const unknown = await t.admin('POST', `/companies/${unknownId}/roster`, { type: 'shop', name: 'X', skills: [] });
    expect(unknown.statusCode).toBe(404);
    expect((await roster(unknownId)).statusCode).toBe(404);
    expect((await t.admin('DELETE', `/roster/${unknownId}`)).statusCode).toBe(404);
    expect((await t.admin('DELETE', '/roster/nope')).statusCode).toBe(404);
  });

  it("lists only the company's own members", async () => {
    const other = await t.createCompany('Other Roster Co');
    await t.admin('POST', `/companies/${other.id}/roster`, { type: 'shop', name: 'Their Shop', skills: [] });
    expect((await roster(other.id)).json().data.map((m: { name: string }) => m.name)).toEqual(['Their Shop']);
    expect((await roster()).json().data.map((m: { name: string }) => m.name)).not.toContain('Their Shop');
  });

  it('a member taken off stays listed as inactive and is proposed no more', async () => {
    const company = (await roster()).json().data as Array<{ id: string; name: string }>;
    // Only the oil-change shop can take the run: the assistant proposes it.
    expect(await proposalForNewRun()).toMatchObject({ assignee: { type: 'shop', name: 'Joliet Lube' } });

    const shop = company.find((m) => m.name === 'Joliet Lube')!;
    const removed = await t.admin('DELETE', `/roster/${shop.id}`);
    expect(removed.statusCode).toBe(200);
    expect(removed.json().data).toMatchObject({ id: shop.id, active: false });
    expect((await roster()).json().data.find((m: { id: string }) => m.id === shop.id)).toMatchObject({
      active: false,
    });
    // Nobody active has the skill now.
    expect(await proposalForNewRun()).toBeNull();
  });

  it('requires the operator token', async () => {
    const response = await t.app.inject({ method: 'GET', url: `/admin/v1/companies/${acme.id}/roster` });
    expect(response.statusCode).toBe(401);
    expect(response.json().error.code).toBe('UNAUTHORIZED');
  });
});
