/**
 * The operator changes a console user's role (docs/operator-api.md), over real HTTP and through
 * fleetctl: the Team page's action, with its last-admin guard (409) and its audit row.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fleetctl } from '../../src/cli/fleetctl.js';
import { adminToken, createTestApp, type TestApp } from '../helpers/app.js';

const password = 'correct horse battery staple';
let t: TestApp;
let base: string;
let env: Record<string, string>;

beforeAll(async () => {
  t = await createTestApp();
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  env = { FLEET_API_URL: base, ADMIN_TOKEN: adminToken, DATABASE_URL: t.config.databaseUrl };
});
afterAll(() => t.close());

async function patchRole(companyId: string, userId: string, body: unknown): Promise<{ status: number; json: any }> {
  const response = await fetch(`${base}/admin/v1/companies/${companyId}/users/${userId}`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: await response.json() };
}

async function run(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const code = await fleetctl(argv, { env, stdout: (l) => stdout.push(l), stderr: (l) => stderr.push(l) });
  return { code, stdout: stdout.join('\n'), stderr: stderr.join('\n') };
}

async function newUser(companyId: string, email: string, role: 'admin' | 'developer'): Promise<string> {
  const created = await t.admin('POST', `/companies/${companyId}/users`, { email, name: email, role, password });
  expect(created.statusCode, created.body).toBe(201);
  return created.json().data.id;
}

async function auditRows(companyId: string): Promise<Array<Record<string, unknown>>> {
  const result = await t.pool.query(
    `SELECT actor_kind, actor_id, actor_label, action, target_id FROM audit_events
     WHERE company_id = $1 AND action = 'user.role_changed' ORDER BY id`,
    [companyId],
  );
  return result.rows;
}

describe('operator: change a console user role', () => {
  it('PATCH changes the role with an audit row by the operator; refuses the last admin with 409', async () => {
    const company = await t.createCompany('Roles Op Co');
    const adminId = await newUser(company.id, 'admin@roles-op.test', 'admin');
    const devId = await newUser(company.id, 'dev@roles-op.test', 'developer');

    const demoted = await patchRole(company.id, adminId, { role: 'developer' });
    expect(demoted.status).toBe(409);
    expect(demoted.json).toMatchObject({
      success: false,
      error: {
        code: 'INVALID_STATE_TRANSITION',
        message: 'the last admin cannot be demoted; make another admin first',
      },
    });

    const promoted = await patchRole(company.id, devId, { role: 'admin' });
    expect(promoted.status).toBe(200);
    expect(promoted.json.data).toMatchObject({ id: devId, role: 'admin', email: 'dev@roles-op.test' });
    // Two admins now: the first may step down.
    expect((await patchRole(company.id, adminId, { role: 'developer' })).json.data.role).toBe('developer');
    // The same role again changes nothing and writes no row.
    expect((await patchRole(company.id, adminId, { role: 'developer' })).status).toBe(200);
    expect(await auditRows(company.id)).toEqual([
      {
        actor_kind: 'operator',
        actor_id: null,
        actor_label: 'operator',
        action: 'user.role_changed',
        target_id: devId,
      },
      {
        actor_kind: 'operator',
        actor_id: null,
        actor_label: 'operator',
        action: 'user.role_changed',
        target_id: adminId,
      },
    ]);
  });

  it('answers 400 to a bad role, 404 to another company, an unknown or a disabled user, 401 without the token', async () => {
    const company = await t.createCompany('Roles Op Bounds');
    const other = await t.createCompany('Roles Op Other');
    const userId = await newUser(company.id, 'one@roles-op.test', 'admin');
    const bad = await patchRole(company.id, userId, { role: 'owner' });
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe('INVALID_REQUEST');
    expect((await patchRole(company.id, userId, { role: 'admin', extra: 1 })).status).toBe(400);
    for (const [companyId, id] of [
      [other.id, userId],
      [company.id, '00000000-0000-4000-8000-000000000000'],
      [company.id, 'not-an-id'],
    ] as const) {
      const refused = await patchRole(companyId, id, { role: 'developer' });
      expect(refused.status, `${companyId} ${id}`).toBe(404);
      expect(refused.json.error.code).toBe('NOT_FOUND');
    }
    const leaverId = await newUser(company.id, 'leaver@roles-op.test', 'developer');
    expect((await t.admin('DELETE', `/users/${leaverId}`)).statusCode).toBe(200);
    expect((await patchRole(company.id, leaverId, { role: 'admin' })).status).toBe(404);
    const anonymous = await fetch(`${base}/admin/v1/companies/${company.id}/users/${userId}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ role: 'developer' }),
    });
    expect(anonymous.status).toBe(401);
  });

  it('fleetctl user set-role takes --user or --email; user list shows the roles; the last admin is refused', async () => {
    const company = await t.createCompany('Roles Cli Co');
    const adminId = await newUser(company.id, 'admin@roles-cli.test', 'admin');
    await newUser(company.id, 'dev@roles-cli.test', 'developer');

    const byEmail = await run(
      'user',
      'set-role',
      '--company',
      company.id,
      '--email',
      'Dev@Roles-Cli.test',
      '--role',
      'admin',
    );
    expect(byEmail).toMatchObject({ code: 0, stdout: 'console user dev@roles-cli.test is now admin' });
    const byId = await run(
      'user',
      'set-role',
      '--company',
      company.id,
      '--user',
      adminId,
      '--role',
      'developer',
      '--json',
    );
    expect(byId.code).toBe(0);
    expect(JSON.parse(byId.stdout)).toMatchObject({ id: adminId, role: 'developer' });

    const listed = await run('user', 'list', '--company', company.id);
    expect(listed.stdout.split('\n')[0]).toMatch(/^ID\s+EMAIL\s+NAME\s+ROLE\s+DISABLED_AT$/);
    expect(listed.stdout).toMatch(/admin@roles-cli\.test\s+admin@roles-cli\.test\s+developer\s+-/);
    expect(listed.stdout).toMatch(/dev@roles-cli\.test\s+dev@roles-cli\.test\s+admin\s+-/);

    const last = await run(
      'user',
      'set-role',
      '--company',
      company.id,
      '--email',
      'dev@roles-cli.test',
      '--role',
      'developer',
    );
    expect(last.code).not.toBe(0);
    expect(last.stderr).toBe(
      'fleetctl: INVALID_STATE_TRANSITION: the last admin cannot be demoted; make another admin first',
    );
    const nobody = await run(
      'user',
      'set-role',
      '--company',
      company.id,
      '--email',
      'no@roles-cli.test',
      '--role',
      'admin',
    );
    expect(nobody.stderr).toBe('fleetctl: the company has no live console user no@roles-cli.test');
    expect((await run('user', 'set-role', '--company', company.id, '--role', 'admin')).stderr).toMatch(
      /^fleetctl: missing --user or --email/,
    );
  });
});
