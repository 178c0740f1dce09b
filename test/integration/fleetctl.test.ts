import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fleetctl } from '../../src/cli/fleetctl.js';
import { adminToken, createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
let env: Record<string, string>;

beforeAll(async () => {
  t = await createTestApp();
  const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  env = { FLEET_API_URL: address, ADMIN_TOKEN: adminToken, DATABASE_URL: t.config.databaseUrl };
});
afterAll(() => t.close());

async function run(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const code = await fleetctl(argv, { env, stdout: (l) => stdout.push(l), stderr: (l) => stderr.push(l) });
  return { code, stdout: stdout.join('\n'), stderr: stderr.join('\n') };
}

describe('fleetctl', () => {
  it('creates a company, a key that works against the API, a vehicle, and lists them', async () => {
    const company = await run('company', 'create', 'Acme', 'Logistics', '--external-id', 'shopmonkey=cus_1', '--json');
    expect(company.code).toBe(0);
    const { id, name, external_ids } = JSON.parse(company.stdout);
    expect([name, external_ids]).toEqual(['Acme Logistics', { shopmonkey: 'cus_1' }]);

    const human = await run('key', 'create', id, '--name', 'ci');
    expect(human.code).toBe(0);
    const key = /\n {2}(fk_\S+)\n/.exec(human.stdout)![1]!;
    expect(human.stdout).toContain('Shown once');
    expect((await t.api('GET', '/vehicles', key)).statusCode).toBe(200);

    const vehicle = await run(
      'vehicle',
      'add',
      id,
      '--name',
      'Truck 7',
      '--vin',
      '1M8GDM9AXKP042788',
      '--plate',
      'TR-7',
      '--year',
      '2019',
      '--provider',
      'geotab',
      '--provider-vehicle-id',
      'b2A',
    );
    expect(vehicle.code).toBe(0);
    expect(vehicle.stdout).toMatch(/^added vehicle "Truck 7"\nid: [0-9a-f-]{36}$/);
    const listed = await run('vehicle', 'list', id);
    expect(listed.stdout.split('\n')[0]).toMatch(/^ID\s+NAME\s+LICENSE_PLATE\s+VIN\s+PROVIDER\s+STATUS$/);
    expect(listed.stdout).toMatch(/Truck 7\s+TR-7\s+1M8GDM9AXKP042788\s+geotab\s+unknown/);
    expect(JSON.parse((await run('company', 'list', '--json')).stdout).map((c: { id: string }) => c.id)).toContain(id);
  });

  it('revokes a key, after which the API answers 401', async () => {
    const { id } = JSON.parse((await run('company', 'create', 'Revokers', '--json')).stdout);
    const key = JSON.parse((await run('key', 'create', id, '--json')).stdout);
    const revoked = await run('key', 'revoke', key.id);
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toMatch(/^revoked key /);
    expect((await t.api('GET', '/runs', key.key)).statusCode).toBe(401);
  });

  it('adds a console user (generated password printed once) who can sign in, and disables them', async () => {
    const { id } = JSON.parse((await run('company', 'create', 'Console Co', '--json')).stdout);
    const added = await run('user', 'add', '--company', id, '--email', 'dev@console.test', '--name', 'Dev');
    expect(added.code).toBe(0);
    expect(added.stdout).toMatch(
      /^created console user dev@console\.test\nid: [0-9a-f-]{36}\nrole: admin\n\n {2}password: \S{24}\n\nShown once/,
    );
    const userId = /id: (\S+)/.exec(added.stdout)![1]!;
    const password = /password: (\S+)/.exec(added.stdout)![1]!;
    const signIn = () =>
      fetch(`${env.FLEET_API_URL}/console/sign-in`, {
        method: 'POST',
        redirect: 'manual',
        headers: { origin: env.FLEET_API_URL!, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ email: 'dev@console.test', password }),
      });
    expect((await signIn()).status).toBe(303);

    const given = await run(
      'user',
      'add',
      '--company',
      id,
      '--email',
      'b@console.test',
      '--name',
      'B',
      '--password',
      'twelve chars!',
      '--json',
    );
    expect(JSON.parse(given.stdout)).not.toHaveProperty('password');

    const disabled = await run('user', 'disable', userId);
    expect(disabled.stdout).toMatch(/^disabled console user dev@console\.test at \S+; their sessions ended$/);
    expect((await signIn()).status).toBe(401);
    expect((await run('user', 'add', '--company', id, '--name', 'x')).stderr).toMatch(/^fleetctl: missing --email/);
  });

  it('transfers a vehicle to another company', async () => {
    const from = await t.createCompany('Sellers');
    const to = await t.createCompany('Buyers');
    const vehicle = await t.createVehicle(from.id, { name: 'Van 3' });
    const moved = await run('vehicle', 'transfer', vehicle.id, to.id);
    expect(moved).toMatchObject({ code: 0, stdout: `moved vehicle "Van 3" to company ${to.id}` });
    expect((await t.api('GET', `/vehicles/${vehicle.id}`, to.key)).statusCode).toBe(200);
    expect((await run('vehicle', 'transfer', vehicle.id, to.id)).stderr).toBe(
      'fleetctl: INVALID_STATE_TRANSITION: the vehicle already belongs to this company',
    );
  });

  it('migrate reports an up-to-date database', async () => {
    expect(await run('migrate', '--json')).toMatchObject({ code: 0, stdout: JSON.stringify({ applied: [] }, null, 2) });
  });

  it('fails with one clear line: API errors, bad input, missing token, unreachable service', async () => {
    const notFound = await run('key', 'create', '00000000-0000-4000-8000-000000000000');
    expect(notFound).toMatchObject({ code: 1, stderr: 'fleetctl: NOT_FOUND: company not found' });
    expect((await run('vehicle', 'add', 'nope')).stderr).toBe('fleetctl: NOT_FOUND: company not found');
    expect((await run('company', 'create', 'x', '--external-id', 'novalue')).stderr).toBe(
      'fleetctl: --external-id takes connector=id (got "novalue")',
    );
    expect((await run('teleport')).stderr).toMatch(/^fleetctl: unknown command "teleport"/);
    env = { ...env, ADMIN_TOKEN: '' };
    expect((await run('company', 'list')).stderr).toBe(
      'fleetctl: ADMIN_TOKEN is not set: fleetctl needs the operator token of the service',
    );
    env = { ...env, ADMIN_TOKEN: adminToken, FLEET_API_URL: 'http://127.0.0.1:1' };
    expect((await run('company', 'list')).stderr).toMatch(/^fleetctl: cannot reach http:\/\/127.0.0.1:1/);
  });
});

describe('fleetctl inbox replay', () => {
  it('re-normalizes stored payloads once a vehicle is mapped, with progress, idempotently', async () => {
    const { createConnection, drainInbox, pushGeneric, readingCount } = await import('../helpers/ingest.js');
    const company = await t.createCompany('Replayers');
    const connection = await createConnection(t, company.id, 'generic');
    const workers = await t.startWorkers(['ingest']);
    const payload = (minute: number) => ({
      readings: [
        {
          vehicle: 'late-van',
          ts: `2026-11-21T10:0${minute}:00Z`,
          signals: { fuel_percent: 40 + minute, speed_kph: 10 },
        },
      ],
    });
    for (const minute of [1, 2, 3])
      await pushGeneric(t, 'generic', connection.id, connection.generated_secret!, payload(minute));
    await drainInbox(t);
    // Samples arrived before anyone mapped the vehicle: kept in the inbox, counted, not stored as readings.
    const van = await t.createVehicle(company.id, {
      provider_connection_id: connection.id,
      provider_vehicle_id: 'late-van',
    });
    expect(await readingCount(t, van.id)).toBe(0);

    const progress: string[] = [];
    const stdout: string[] = [];
    const code = await fleetctl(
      ['inbox', 'replay', '--since', '2000-01-01T00:00:00Z', '--provider', 'generic', '--json'],
      {
        env,
        stdout: (l) => stdout.push(l),
        stderr: () => {},
        progress: (l) => progress.push(l),
      },
    );
    expect(code).toBe(0);
    const summary = JSON.parse(stdout.join('\n'));
    expect(summary).toMatchObject({ samples: 6, failed: 0, busy: 0, changedVehicleIds: [van.id] });
    expect(summary.rows).toBeGreaterThanOrEqual(3);
    expect(progress.at(-1)).toMatch(/^replaying inbox \[#{30}\] 100% (\d+)\/\1 rows$/);
    expect(await readingCount(t, van.id)).toBe(6);
    expect((await t.api('GET', `/vehicles/${van.id}`, company.key)).json().data.signals.fuel_percent).toBe(43);

    await fleetctl(['inbox', 'replay', '--since', '2000-01-01T00:00:00Z'], { env, stdout: () => {}, stderr: () => {} });
    expect(await readingCount(t, van.id)).toBe(6);
    expect((await run('inbox', 'replay', '--since', 'last tuesday')).stderr).toMatch(/--since must be an ISO time/);
    await workers.close();
  });
});
