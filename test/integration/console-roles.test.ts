/**
 * Team routes and Change password through inject, as the browser's forms send them: the role
 * checks and refusals that console-team.test.ts (Chromium) does not reach.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { newConsoleUser, signInToConsole } from '../helpers/console.js';

const password = 'correct horse battery staple';
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t.close();
});

describe('console roles', () => {
  it('answers 403 to a developer on every team route, and lets an admin promote them', async () => {
    const company = await t.createCompany('Roles Co');
    const admin = await newConsoleUser(t, company.id, 'admin@roles.test', password);
    const created = await t.admin('POST', `/companies/${company.id}/users`, {
      email: 'dev@roles.test',
      name: 'Dev',
      role: 'developer',
      password,
    });
    const devId = created.json().data.id;
    const dev = await signInToConsole(t, 'dev@roles.test', password);
    expect((await dev.get('/console/team')).statusCode).toBe(403);
    expect((await dev.post('/console/team', { email: 'x@roles.test', name: 'X', role: 'admin' })).statusCode).toBe(403);
    expect((await dev.post(`/console/team/${devId}/role`, { role: 'admin' })).statusCode).toBe(403);
    expect((await dev.post(`/console/team/${devId}/disable`)).statusCode).toBe(403);
    expect((await dev.get('/console/vehicles')).body).not.toContain('href="/console/team"');

    const promoted = await admin.post(`/console/team/${devId}/role`, { role: 'admin' });
    expect(promoted.statusCode).toBe(303);
    // The role applies to the developer's next request, in the session they already have.
    expect((await dev.get('/console/team')).statusCode).toBe(200);
    // Two admins now: either may step down.
    const adminId = (await t.pool.query(`SELECT id FROM console_users WHERE email = 'admin@roles.test'`)).rows[0].id;
    expect((await dev.post(`/console/team/${adminId}/role`, { role: 'developer' })).headers.location).toMatch(
      /^\/console\/team\?done=/,
    );
  });

  it("refuses another company's user as not found", async () => {
    const one = await t.createCompany('One');
    const two = await t.createCompany('Two');
    const admin = await newConsoleUser(t, one.id, 'admin@one.test', password);
    const stranger = await t.admin('POST', `/companies/${two.id}/users`, { email: 's@two.test', name: 'S', password });
    const id = stranger.json().data.id;
    const refused = await admin.post(`/console/team/${id}/disable`);
    expect(refused.statusCode).toBe(303);
    expect((await admin.get(String(refused.headers.location))).body).toContain('Not disabled: user not found.');
    const row = await t.pool.query(`SELECT disabled_at FROM console_users WHERE id = $1`, [id]);
    expect(row.rows[0].disabled_at).toBeNull();
  });

  it('refuses a wrong current password and a short new one, changing nothing', async () => {
    const company = await t.createCompany('Password Co');
    const user = await newConsoleUser(t, company.id, 'pw@roles.test', password);
    const wrong = await user.post('/console/account', { current: 'wrong one here', next: 'a brand new passphrase' });
    expect(wrong.headers.location).toMatch(/^\/console\/account\?refused=/);
    expect((await user.get(String(wrong.headers.location))).body).toContain(
      'Not changed: current: is not your current password.',
    );
    const short = await user.post('/console/account', { current: password, next: 'short' });
    expect((await user.get(String(short.headers.location))).body).toContain('at least 12 characters');
    await signInToConsole(t, 'pw@roles.test', password);
  });
});
