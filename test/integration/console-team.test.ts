/**
 * The console's second round in Chromium (DESIGN §12 "Second round"): Team and roles, Change
 * password, Delete of subscriptions in a dialog, Activity, Requests and paging. Role and label
 * locators only; axe on every new page; CONSOLE_SCREENSHOTS=1 saves docs/images/console-<page>.png.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import {
  expectAccessible,
  expectOneHeading,
  expectShownOnce,
  launchConsoleBrowser,
  nav,
  shoot,
  signIn,
  submitSignIn,
  textOf,
  type ConsoleBrowser,
} from '../helpers/browser.js';
import { v1 } from '../helpers/monitoring.js';

const password = 'correct horse battery staple';

let t: TestApp;
let browser: ConsoleBrowser;
let base: string;
let company: { id: string; key: string };
let vehicleId: string;
const admin = { email: 'admin@team.test', name: 'Ada Admin' };

beforeAll(async () => {
  t = await createTestApp({ WEBHOOK_ALLOW_NETS: '127.0.0.1/32', MONITORING_SUBSCRIPTIONS_PER_COMPANY: '50' });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  browser = await launchConsoleBrowser(base);
  company = await t.createCompany('Team Co');
  const created = await t.admin('POST', `/companies/${company.id}/users`, { ...admin, password });
  expect(created.statusCode).toBe(201);
  expect(created.json().data.role).toBe('admin');
  vehicleId = (await t.createVehicle(company.id, { name: 'Team Van' })).id;
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe('console team, activity, requests, delete and paging', () => {
  it('an admin invites a developer, shown once; the developer signs in, sees no Team link and gets 403 on it', async () => {
    const page = await browser.newPage();
    await signIn(page, admin.email, password);
    await nav(page, 'Team');
    await expectAccessible(page);
    await page.getByLabel('Email').fill('dev@team.test');
    await page.getByLabel('Name').fill('Dev Eloper');
    await page.getByLabel('Role', { exact: true }).selectOption('developer');
    await page.getByRole('button', { name: 'Invite' }).click();
    const temporary = await page.getByLabel('Temporary password').inputValue();
    expect(temporary).toMatch(/^\S{24}$/);
    await expectAccessible(page);
    await shoot(page, 'team');
    expect(await page.getByLabel('Role of dev@team.test').inputValue()).toBe('developer');
    await page.reload();
    await expectShownOnce(page, 'Temporary password', temporary, /shown once and is not shown again/);

    const dev = await browser.newPage();
    await signIn(dev, 'dev@team.test', temporary);
    const links = dev.getByRole('navigation', { name: 'Console' }).getByRole('link');
    expect(await links.allTextContents()).toEqual([
      'Vehicles',
      'API keys',
      'Webhooks',
      'Monitoring',
      'Usage',
      'Activity',
      'Requests',
    ]);
    const refused = await dev.goto('/console/team');
    expect(refused!.status()).toBe(403);
    const post = await dev.request.post('/console/team', {
      headers: { origin: base },
      form: { email: 'sneaky@team.test', name: 'S', role: 'admin', _csrf: 'x' },
    });
    expect(post.status()).toBe(403);
  });

  it('the last admin can be neither disabled nor demoted; a disabled user is signed out', async () => {
    const page = await browser.newPage();
    await signIn(page, admin.email, password);
    await nav(page, 'Team');
    const own = page.getByRole('row', { name: /admin@team\.test/ });
    await own.getByRole('button', { name: 'Disable' }).click();
    expect(await textOf(page.getByRole('alert'))).toBe(
      'Not disabled: the last admin cannot be disabled; make another admin first.',
    );
    await page
      .getByRole('row', { name: /admin@team\.test/ })
      .getByLabel('Role of admin@team.test')
      .selectOption('developer');
    await page
      .getByRole('row', { name: /admin@team\.test/ })
      .getByRole('button', { name: 'Change role' })
      .click();
    expect(await textOf(page.getByRole('alert'))).toBe(
      'Not changed: the last admin cannot be demoted; make another admin first.',
    );

    // A second user to disable, signed in elsewhere.
    await page.getByLabel('Email').fill('leaver@team.test');
    await page.getByLabel('Name').fill('Lee Ver');
    await page.getByRole('button', { name: 'Invite' }).click();
    const temporary = await page.getByLabel('Temporary password').inputValue();
    const leaver = await browser.newPage();
    await signIn(leaver, 'leaver@team.test', temporary);
    await page
      .getByRole('row', { name: /leaver@team\.test/ })
      .getByRole('button', { name: 'Disable' })
      .click();
    expect(await textOf(page.getByRole('status'))).toBe('Disabled leaver@team.test.');
    await leaver.reload();
    await expectOneHeading(leaver, 'Sign in');
  });

  it('Change password checks the current one and signs out the other sessions, not this one', async () => {
    const created = await t.admin('POST', `/companies/${company.id}/users`, {
      email: 'changer@team.test',
      name: 'Cha Nger',
      role: 'developer',
      password,
    });
    expect(created.json().data.role).toBe('developer');
    const here = await browser.newPage();
    const elsewhere = await browser.newPage();
    await signIn(here, 'changer@team.test', password);
    await signIn(elsewhere, 'changer@team.test', password);
    await here.getByRole('link', { name: 'Change password' }).click();
    await expectOneHeading(here, 'Change password');
    await expectAccessible(here);
    await shoot(here, 'change-password');
    await here.getByLabel('Current password').fill('not my password at all');
    await here.getByLabel('New password').fill('a brand new passphrase');
    await here.getByRole('button', { name: 'Change password' }).click();
    expect(await textOf(here.getByRole('alert'))).toBe('Not changed: current: is not your current password.');
    await here.getByLabel('Current password').fill(password);
    await here.getByLabel('New password').fill('a brand new passphrase');
    await here.getByRole('button', { name: 'Change password' }).click();
    expect(await textOf(here.getByRole('status'))).toMatch(/^Password changed\./);
    await here.goto('/console/api-keys');
    await expectOneHeading(here, 'API keys');
    await elsewhere.reload();
    await expectOneHeading(elsewhere, 'Sign in');
    await signIn(elsewhere, 'changer@team.test', 'a brand new passphrase');
  });

  it('deletes a webhook and a monitoring subscription in the dialog; the API sees them gone', async () => {
    const hook = await t.api('POST', '/webhook-subscriptions', company.key, {
      url: 'http://127.0.0.1:9/hooks',
      events: ['run.created'],
    });
    expect(hook.statusCode).toBe(201);
    const page = await browser.newPage();
    await signIn(page, admin.email, password);
    await nav(page, 'Webhooks');
    await page
      .getByRole('region', { name: 'http://127.0.0.1:9/hooks' })
      .getByRole('button', { name: 'Delete' })
      .click();
    const dialog = page.getByRole('dialog');
    expect(await textOf(dialog.getByRole('heading'))).toBe('Delete webhook subscription?');
    await expectAccessible(page);
    await shoot(page, 'delete-dialog');
    await dialog.getByRole('button', { name: 'Delete' }).click();
    expect(await textOf(page.getByRole('status'))).toMatch(
      /^Deleted the subscription of http:\/\/127\.0\.0\.1:9\/hooks/,
    );
    expect((await t.api('GET', `/webhook-subscriptions/${hook.json().data.id}`, company.key)).statusCode).toBe(404);

    const monitored = await v1(t, 'POST', '/runs/subscribe', company.key, {
      vehicle_id: vehicleId,
      webhook_url: 'http://127.0.0.1:9/monitoring',
      events: ['check_engine_light'],
    });
    expect(monitored.statusCode).toBe(201);
    await nav(page, 'Monitoring');
    await page
      .getByRole('region', { name: /http:\/\/127\.0\.0\.1:9\/monitoring/ })
      .getByRole('button', { name: 'Delete' })
      .click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('status').waitFor();
    const after = await v1(t, 'GET', `/subscriptions/${monitored.json().data.id}`, company.key);
    expect(after.json().data.status).toBe('deleted');
  });

  it('Activity shows each change with who, what and when; GET /v1/audit-events pages the same rows', async () => {
    const page = await browser.newPage();
    await submitSignIn(page, admin.email, 'not the password');
    await page.getByRole('alert').waitFor();
    await signIn(page, admin.email, password);
    await nav(page, 'API keys');
    await page.getByLabel('Key name').fill('audited');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByLabel('New API key').waitFor();
    await nav(page, 'Activity');
    await expectAccessible(page);
    await shoot(page, 'activity');
    const row = (what: string) => page.getByRole('row', { name: new RegExp(what) });
    for (const what of [
      'API key created',
      'User invited',
      'User disabled',
      'Password changed',
      'Signed in',
      'Sign-in failed',
      'Webhook subscription created',
      'Webhook subscription deleted',
      'Monitoring subscription created',
      'Monitoring subscription deleted',
    ])
      expect(await row(what).count(), what).toBeGreaterThan(0);
    expect(await textOf(row('API key created').first())).toContain('admin@team.test');
    // The subscriptions made through the API are the key's, by its prefix.
    expect(await textOf(row('Webhook subscription created').first())).toContain(`API key ${company.key.slice(0, 9)}…`);

    const first = await v1(t, 'GET', '/audit-events?limit=3', company.key);
    expect(first.statusCode).toBe(200);
    const events = first.json().data;
    expect(events).toHaveLength(3);
    expect(events[0].action).toBe('api_key.created');
    expect(events[0].actor).toMatchObject({ kind: 'user', label: 'admin@team.test' });
    const next = await v1(t, 'GET', `/audit-events?limit=3&before=${events[2].id}`, company.key);
    expect(Number(next.json().data[0].id)).toBeLessThan(Number(events[2].id));
  });

  it('Requests lists a request made with a key, with its prefix, filterable by status class and key', async () => {
    expect((await t.api('GET', '/vehicles?limit=7', company.key)).statusCode).toBe(200);
    await t.api('GET', '/vehicles/00000000-0000-4000-8000-000000000000', company.key);
    const page = await browser.newPage();
    await signIn(page, admin.email, password);
    await nav(page, 'Requests');
    await expect
      .poll(async () => {
        await page.reload();
        return page.getByRole('row', { name: /\/api\/v1\/vehicles\/00000000/ }).count();
      })
      .toBe(1);
    const listed = page.getByRole('row', { name: /GET \/api\/v1\/vehicles 200/ });
    expect(await textOf(listed)).toContain(`${company.key.slice(0, 9)}…`);
    expect(await page.content()).not.toContain('limit=7');
    await expectAccessible(page);
    await shoot(page, 'requests');
    await page.getByLabel('Status', { exact: true }).selectOption('4xx');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expectOneHeading(page, 'Requests');
    const rows = page.getByRole('row', { name: /\/api\/v1\// });
    expect(await rows.count()).toBeGreaterThan(0);
    for (const text of await rows.allTextContents()) expect(text).toContain('404');
    const other = (await t.admin('POST', `/companies/${company.id}/api-keys`, { name: 'quiet key' })).json().data;
    await page.reload();
    await page.getByLabel('Key', { exact: true }).selectOption({ label: `quiet key (${other.prefix}…)` });
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText(/No requests match this filter/).waitFor();
  });

  it('pages Activity and monitoring subscriptions with Next and Previous, stable while rows are added', async () => {
    // 30 more subscriptions: more than a page of them, and more than a page of Activity with the rest.
    for (let i = 0; i < 30; i++) {
      const made = await v1(t, 'POST', '/runs/subscribe', company.key, {
        vehicle_id: vehicleId,
        webhook_url: `http://127.0.0.1:9/page-${i}`,
        events: ['check_engine_light'],
      });
      expect(made.statusCode).toBe(201);
    }
    const page = await browser.newPage();
    await signIn(page, admin.email, password);
    await nav(page, 'Monitoring');
    const headings = () => page.getByRole('main').getByRole('heading', { level: 2 }).allTextContents();
    const firstPage = await headings();
    expect(firstPage).toHaveLength(20);
    expect(firstPage[0]).toContain('page-29');
    await shoot(page, 'monitoring-paged');
    // One more arrives meanwhile: the next page still starts where the first ended.
    await v1(t, 'POST', '/runs/subscribe', company.key, {
      vehicle_id: vehicleId,
      webhook_url: 'http://127.0.0.1:9/late',
      events: ['check_engine_light'],
    });
    await page.getByRole('navigation', { name: 'Subscription pages' }).getByRole('link', { name: 'Next' }).click();
    const second = await headings();
    expect(second).toHaveLength(10);
    expect(second[0]).toContain('page-9');
    expect(second.at(-1)).toContain('page-0');
    await page.getByRole('navigation', { name: 'Subscription pages' }).getByRole('link', { name: 'Previous' }).click();
    // The page before is the one seen first; the newcomer is above it, one Previous further.
    const back = await headings();
    expect(back).toEqual(firstPage);
    await page.getByRole('navigation', { name: 'Subscription pages' }).getByRole('link', { name: 'Previous' }).click();
    const top = await headings();
    expect(top[0]).toContain('late');
    expect(top).toHaveLength(20);

    // Vehicles: 51 more than fit a page of 50 with the one made first.
    for (let i = 0; i < 50; i++) await t.createVehicle(company.id, { name: `Paged van ${i}`, vin: null });
    await nav(page, 'Vehicles');
    const vehicleRows = page.getByRole('row', { name: /van/i });
    expect(await vehicleRows.count()).toBe(50);
    await page.getByRole('navigation', { name: 'Vehicle pages' }).getByRole('link', { name: 'Next' }).click();
    expect(await page.getByRole('row', { name: /van/i }).allTextContents()).toEqual([
      expect.stringContaining('Team Van'),
    ]);
    await page.getByRole('navigation', { name: 'Vehicle pages' }).getByRole('link', { name: 'Previous' }).click();
    expect(await page.getByRole('row', { name: /van/i }).count()).toBe(50);

    await nav(page, 'Activity');
    await page.getByRole('navigation', { name: 'Activity pages' }).getByRole('link', { name: 'Next' }).click();
    await expectOneHeading(page, 'Activity');
    await page.getByRole('navigation', { name: 'Activity pages' }).getByRole('link', { name: 'Previous' }).waitFor();
  });
});
