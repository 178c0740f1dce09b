/**
 * Poison isolation: an inbox row Postgres refuses never blocks the rows batched with it, its own
 * connection or other tenants; it is parked with its error, shown to operators (admin API,
 * fleetctl) and replayed after a fix. The poison here is a check constraint the test adds to
 * `readings`: it stands for any row the shared sanitation does not foresee.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adapters } from '../../providers/index.js';
import { fleetctl } from '../../src/cli/fleetctl.js';
import { listPendingInboxIds } from '../../src/db/inbox.js';
import { runIngestBatch } from '../../src/ingest/ingest-job.js';
import { ingestInboxBatch } from '../../src/ingest/isolation.js';
import { createMetrics } from '../../src/metrics.js';
import { createLogger } from '../../src/log.js';
import { adminToken, createTestApp, type TestApp } from '../helpers/app.js';
import { createConnection, drainInbox, pushGeneric } from '../helpers/ingest.js';

let t: TestApp;
let env: Record<string, string>;
interface Tenant {
  companyId: string;
  connectionId: string;
  secret: string;
  vehicleId: string;
}
let acme: Tenant;
let globex: Tenant;
let poisonId: number;

async function tenant(name: string): Promise<Tenant> {
  const company = await t.createCompany(name);
  const connection = await createConnection(t, company.id, 'generic');
  const vehicle = await t.createVehicle(company.id, {
    provider_connection_id: connection.id,
    provider_vehicle_id: 'truck-1',
  });
  return {
    companyId: company.id,
    connectionId: connection.id,
    secret: connection.generated_secret!,
    vehicleId: vehicle.id,
  };
}

async function push(to: Tenant, minute: number, fuel: number): Promise<number> {
  const response = await pushGeneric(t, 'generic', to.connectionId, to.secret, {
    readings: [
      {
        vehicle: 'truck-1',
        ts: `2026-11-20T10:${String(minute).padStart(2, '0')}:00Z`,
        signals: { fuel_percent: fuel },
      },
    ],
  });
  expect(response.statusCode).toBe(202);
  return response.json().data.inbox_id;
}

async function fuelReadings(vehicleId: string): Promise<number[]> {
  const { rows } = await t.pool.query(
    `SELECT value_num FROM readings WHERE vehicle_id = $1 AND signal = 'fuel_percent' ORDER BY recorded_at`,
    [vehicleId],
  );
  return rows.map((r) => r.value_num);
}

async function inboxRow(id: number) {
  const { rows } = await t.pool.query(
    `SELECT processed_at, parked_at, failed_attempts, error FROM ingest_inbox WHERE id = $1`,
    [id],
  );
  return rows[0];
}

async function run(...argv: string[]) {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const progress: string[] = [];
  const code = await fleetctl(argv, {
    env,
    stdout: (l) => stdout.push(l),
    stderr: (l) => stderr.push(l),
    progress: (l) => progress.push(l),
  });
  return { code, stdout: stdout.join('\n'), stderr: stderr.join('\n'), progress };
}

beforeAll(async () => {
  t = await createTestApp();
  const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  env = { FLEET_API_URL: address, ADMIN_TOKEN: adminToken, DATABASE_URL: t.config.databaseUrl };
  acme = await tenant('Acme');
  globex = await tenant('Globex');
  await t.pool.query(`ALTER TABLE readings ADD CONSTRAINT poison_probe CHECK (value_num IS DISTINCT FROM 13.13)`);
});
afterAll(() => t.close());

describe('a poisoned inbox row', () => {
  it('is parked with its error while the good rows of its batch, of its tenant and of another, are stored', async () => {
    await push(acme, 1, 40);
    poisonId = await push(acme, 2, 13.13);
    await push(globex, 1, 50);
    await push(acme, 3, 41);

    const metrics = createMetrics('test');
    const logLines: string[] = [];
    const result = await runIngestBatch(
      {
        pool: t.pool,
        queues: t.queues,
        log: createLogger('warn', 'test', { write: (line) => logLines.push(line) }),
        metrics,
      },
      adapters,
    );
    expect(result).toMatchObject({ claimed: 4, rows: 3, parked: 1 });
    // The batch's own failure is in its warning: what made a whole batch take the row-by-row path.
    const warning = logLines
      .map((line) => JSON.parse(line) as { msg: string; error?: string })
      .find((entry) => entry.msg.startsWith('ingest batch failed'));
    expect(warning?.error).toMatch(/^23514 .*poison_probe/);
    expect(await fuelReadings(acme.vehicleId)).toEqual([40, 41]);
    expect(await fuelReadings(globex.vehicleId)).toEqual([50]);
    const parked = await inboxRow(poisonId);
    expect(parked.processed_at).toBeNull();
    expect(parked.parked_at).toBeInstanceOf(Date);
    expect(parked.failed_attempts).toBe(1);
    expect(parked.error).toMatch(/^23514 .*poison_probe/);
    const exposition = await metrics.registry.metrics();
    expect(exposition).toContain('ingest_inbox_parked_total{provider="generic",process="test"} 1');
    expect(exposition).toContain('ingest_batches_isolated_total{process="test"} 1');
  });

  it('is never picked again, by a job or by the recovery sweep', async () => {
    expect(await listPendingInboxIds(t.pool, new Date(Date.now() + 3600_000), 100)).not.toContain(poisonId);
    const again = await ingestInboxBatch(t.pool, adapters);
    expect(again).toMatchObject({ rows: [], parked: [], isolatedBy: null });
    expect((await inboxRow(poisonId)).failed_attempts).toBe(1);
  });

  it('leaves later pushes of the same connection flowing through the workers', async () => {
    const workers = await t.startWorkers(['ingest']);
    await push(acme, 4, 42);
    await push(acme, 5, 13.13);
    await push(acme, 6, 43);
    await drainInbox(t);
    await workers.close();
    expect(await fuelReadings(acme.vehicleId)).toEqual([40, 41, 42, 43]);
    const vehicle = (await t.admin('GET', `/companies/${acme.companyId}/vehicles`)).json().data[0];
    expect(vehicle.signals.fuel_percent).toBe(43);
    const { rows } = await t.pool.query(`SELECT count(*)::int AS n FROM ingest_inbox WHERE parked_at IS NOT NULL`);
    expect(rows[0].n).toBe(2);
  });
});

describe('operators', () => {
  it('list parked rows in the operator API, with filters, and see one row with its payload', async () => {
    const listed = await t.admin('GET', '/inbox/failed');
    expect(listed.statusCode).toBe(200);
    const body = listed.json();
    expect(body.meta).toMatchObject({ total: 2, limit: 50, offset: 0 });
    expect(body.data[0]).toEqual({
      inbox_id: poisonId,
      company_id: acme.companyId,
      connection_id: acme.connectionId,
      provider: 'generic',
      received_at: expect.any(String),
      parked_at: expect.any(String),
      failed_attempts: 1,
      error: expect.stringMatching(/^23514 .*poison_probe/),
      payload_bytes: expect.any(Number),
    });
    const page = (await t.admin('GET', '/inbox/failed?limit=1&offset=1')).json();
    expect(page.data.map((r: { inbox_id: number }) => r.inbox_id)).not.toContain(poisonId);
    expect(page.meta.total).toBe(2);
    expect((await t.admin('GET', `/inbox/failed?company_id=${globex.companyId}`)).json()).toMatchObject({
      data: [],
      meta: { total: 0 },
    });
    expect(
      (await t.admin('GET', `/inbox/failed?connection_id=${acme.connectionId}&provider=generic`)).json().meta.total,
    ).toBe(2);
    expect((await t.admin('GET', '/inbox/failed?provider=samsara')).json().data).toEqual([]);

    const detail = (await t.admin('GET', `/inbox/${poisonId}`)).json().data;
    expect(detail).toMatchObject({ inbox_id: poisonId, state: 'parked', processed_at: null, failed_attempts: 1 });
    expect(JSON.parse(detail.payload_preview).readings[0].signals.fuel_percent).toBe(13.13);
  });

  it('get the error envelope for bad filters and unknown rows, and 401 without the token', async () => {
    for (const query of [
      'connection_id=abc',
      'limit=0',
      'limit=201',
      'offset=-1',
      'offset=1e21',
      'provider=nope',
      'colour=red',
    ]) {
      const response = await t.admin('GET', `/inbox/failed?${query}`);
      expect(response.statusCode, query).toBe(400);
      expect(response.json()).toMatchObject({ success: false, error: { code: 'INVALID_REQUEST' } });
    }
    for (const id of ['999999999', 'abc', '0', '1'.repeat(40)]) {
      const response = await t.admin('GET', `/inbox/${id}`);
      expect(response.statusCode, id).toBe(404);
      expect(response.json().error.code).toBe('NOT_FOUND');
    }
    const anonymous = await t.app.inject({ method: 'GET', url: '/admin/v1/inbox/failed' });
    expect(anonymous.statusCode).toBe(401);
  });

  it('list them with fleetctl inbox failed', async () => {
    const human = await run('inbox', 'failed');
    expect(human.code).toBe(0);
    const lines = human.stdout.split('\n');
    expect(lines[0]).toMatch(/^INBOX_ID\s+PROVIDER\s+CONNECTION_ID\s+RECEIVED_AT\s+FAILED_ATTEMPTS\s+ERROR$/);
    expect(lines[1]).toMatch(new RegExp(`^${poisonId}\\s+generic\\s+${acme.connectionId}\\s+\\S+Z\\s+1\\s+23514 `));
    expect(lines).toHaveLength(3);
    const json = await run('inbox', 'failed', '--company', acme.companyId, '--json');
    expect(JSON.parse(json.stdout).map((r: { inbox_id: number }) => r.inbox_id)[0]).toBe(poisonId);
    expect((await run('inbox', 'failed', '--provider', 'motive')).stdout).toBe('(none)');
  });
});

describe('replaying parked rows', () => {
  it('parks them again while the cause is still there, counting the attempt', async () => {
    const replay = await run('inbox', 'replay', '--parked', '--json');
    expect(replay.code).toBe(0);
    expect(JSON.parse(replay.stdout)).toMatchObject({ rows: 2, samples: 0, parked: 2, failed: 0, busy: 0 });
    expect((await inboxRow(poisonId)).failed_attempts).toBe(2);
  });

  it('stores them after the fix, with progress, idempotently', async () => {
    await t.pool.query(`ALTER TABLE readings DROP CONSTRAINT poison_probe`);
    const replay = await run('inbox', 'replay', '--parked', '--connection', acme.connectionId, '--json');
    expect(replay.code).toBe(0);
    expect(JSON.parse(replay.stdout)).toMatchObject({
      rows: 2,
      samples: 2,
      parked: 0,
      // Older than the vehicle's latest fuel level: history, the state does not move.
      changedVehicleIds: [],
    });
    expect(replay.progress.at(-1)).toMatch(/^replaying inbox \[#{30}\] 100% 2\/2 rows$/);
    const row = await inboxRow(poisonId);
    expect(row.processed_at).toBeInstanceOf(Date);
    expect([row.parked_at, row.error]).toEqual([null, null]);
    expect(await fuelReadings(acme.vehicleId)).toEqual([40, 13.13, 41, 42, 13.13, 43]);
    expect((await t.admin('GET', '/inbox/failed')).json().meta.total).toBe(0);
    expect((await t.admin('GET', `/inbox/${poisonId}`)).json().data.state).toBe('processed');

    const again = await run('inbox', 'replay', '--parked', '--json');
    expect(JSON.parse(again.stdout)).toMatchObject({ rows: 0, samples: 0 });
    const everything = await run('inbox', 'replay', '--since', '2000-01-01T00:00:00Z', '--json');
    expect(JSON.parse(everything.stdout)).toMatchObject({ rows: 7, samples: 7, parked: 0 });
    expect(await fuelReadings(acme.vehicleId)).toEqual([40, 13.13, 41, 42, 13.13, 43]);
  });

  it('refuses a replay without a selection or with a malformed connection id', async () => {
    expect((await run('inbox', 'replay')).stderr).toMatch(
      /^fleetctl: inbox replay needs --since <ISO time> or --parked/,
    );
    expect((await run('inbox', 'replay', '--parked', '--connection', 'acme')).stderr).toBe(
      'fleetctl: --connection must be a provider connection id (got "acme")',
    );
  });
});

describe('a transient failure', () => {
  it('is not the row’s fault: the job fails, the row stays pending, and a retry stores it', async () => {
    await t.pool.query(`
      CREATE FUNCTION simulate_serialization_failure() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.value_num = 77.77 THEN
          RAISE EXCEPTION 'simulated serialization failure' USING ERRCODE = '40001';
        END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER simulate_serialization_failure BEFORE INSERT ON readings
        FOR EACH ROW EXECUTE FUNCTION simulate_serialization_failure();`);
    const id = await push(globex, 7, 77.77);
    await expect(ingestInboxBatch(t.pool, adapters)).rejects.toMatchObject({ code: '40001' });
    expect(await inboxRow(id)).toEqual({ processed_at: null, parked_at: null, failed_attempts: 0, error: null });

    await t.pool.query(`DROP TRIGGER simulate_serialization_failure ON readings`);
    const retried = await ingestInboxBatch(t.pool, adapters);
    expect(retried.rows.map((r) => r.inboxId)).toEqual([id]);
    expect(await fuelReadings(globex.vehicleId)).toEqual([50, 77.77]);
  });
});
