/**
 * The developer console in a real browser (Debian's Chromium through playwright-core) against
 * the real app on loopback, with real Postgres, Redis and webhook workers. Role and label
 * locators only (the names docs/console.md uses). One browser for the file; each flow gets its own context
 * (its own cookies). With CONSOLE_SCREENSHOTS=1 the tour saves docs/images/console-<page>.png.
 */
import { createServer, type Server } from 'node:http';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminToken, createTestApp, type TestApp } from '../helpers/app.js';
import { createConnection, pushGeneric, settle } from '../helpers/ingest.js';
import { insertDelivery, v1 } from '../helpers/monitoring.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import {
  expectAccessible,
  expectOneHeading,
  expectShownOnce,
  launchConsoleBrowser,
  shoot,
  signIn,
  submitSignIn,
  textOf,
  type ConsoleBrowser,
} from '../helpers/browser.js';

const password = 'correct horse battery staple';
/** API_KEYS_PER_COMPANY here: low, so a company reaches it with a few keys. */
const keyCap = 4;

let t: TestApp;
let browser: ConsoleBrowser;
let base: string;
let receiver: Receiver;
const firstLoadMs: Record<string, number> = {};

interface Tenant {
  companyId: string;
  key: string;
  email: string;
  vehicleId: string;
}
let acme: Tenant;
let other: Tenant;

async function tenant(name: string, email: string, vin: string): Promise<Tenant> {
  const company = await t.createCompany(name);
  const user = await t.admin('POST', `/companies/${company.id}/users`, { email, name: `${name} Dev`, password });
  expect(user.statusCode).toBe(201);
  expect(user.body).not.toContain(password);
  const vehicle = await t.createVehicle(company.id, { name: `${name} Van`, vin });
  return { companyId: company.id, key: company.key, email, vehicleId: vehicle.id };
}

/** A second vehicle of the tenant with readings through the real ingest path: signals, health, alerts. */
async function trackedVehicle(owner: Tenant): Promise<void> {
  const connection = await createConnection(t, owner.companyId, 'generic');
  await t.createVehicle(owner.companyId, {
    name: 'Box truck 7',
    vin: '1FTBW3XM6HKA12345',
    provider_connection_id: connection.id,
    provider_vehicle_id: 'truck-7',
  });
  const at = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000).toISOString();
  const signals = {
    odometer_km: 84_211,
    engine_state: 'off',
    battery_voltage: 11.6,
    fuel_percent: 41,
    coolant_temp_c: 22,
    dtcs: [{ code: 'P0300' }],
    check_engine_light: true,
    location: { lat: 41.8781, lon: -87.6298, heading: 90 },
  };
  const response = await pushGeneric(t, 'generic', connection.id, connection.generated_secret!, {
    readings: [
      { vehicle: 'truck-7', ts: at(10), signals },
      { vehicle: 'truck-7', ts: at(5), signals },
    ],
  });
  expect(response.statusCode).toBe(202);
  await settle(t);
}

/** Navigation Timing of the page just loaded: request start to the load event, in ms. */
async function loadMs(page: Page): Promise<number> {
  return page.evaluate(() => {
    const [nav] = (performance as any).getEntriesByType('navigation');
    return Math.round(nav.loadEventEnd - nav.startTime);
  });
}

async function keyCount(owner: Tenant): Promise<number> {
  return (await t.admin('GET', `/companies/${owner.companyId}/api-keys`)).json().data.length;
}

async function liveKeyCount(companyId: string): Promise<number> {
  const keys: Array<{ revoked_at: string | null }> = (await t.admin('GET', `/companies/${companyId}/api-keys`)).json()
    .data;
  return keys.filter((k) => k.revoked_at === null).length;
}

async function subscriptionCount(owner: Tenant): Promise<number> {
  return (await t.api('GET', '/webhook-subscriptions', owner.key)).json().data.length;
}

beforeAll(async () => {
  t = await createTestApp({
    WEBHOOK_ALLOW_NETS: '127.0.0.1/32',
    WEBHOOK_TIMEOUT_MS: '2000',
    CONSOLE_SIGN_IN_FAILURES_PER_EMAIL: '3',
    API_KEYS_PER_COMPANY: String(keyCap),
  });
  await t.startWorkers(['webhooks', 'ingest', 'health']);
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  receiver = await startReceiver();
  browser = await launchConsoleBrowser(base);
  acme = await tenant('Acme Fleet', 'dev@acme.test', '1HGCM82633A004352');
  await trackedVehicle(acme);
  other = await tenant('Other Co', 'dev@other.test', '1M8GDM9AXKP042788');
});

afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await t?.close();
  if (Object.keys(firstLoadMs).length > 0) {
    console.log(`console first load (ms, navigation start to load event, cold cache): ${JSON.stringify(firstLoadMs)}`);
  }
});

describe('developer console', () => {
  it('shows sign-in when signed out, refuses a wrong password with an alert, signs in and out', async () => {
    const page = await browser.newPage();
    await page.goto('/console');
    await expectOneHeading(page, 'Sign in');
    await expectAccessible(page);
    firstLoadMs['sign-in'] = await loadMs(page);
    await shoot(page, 'sign-in');

    await submitSignIn(page, acme.email, 'not the password');
    expect(await textOf(page.getByRole('alert'))).toBe('Wrong email or password.');

    await signIn(page, acme.email, password);
    await expectOneHeading(page, 'Vehicles');
    for (const name of ['Vehicles', 'API keys', 'Webhooks', 'Monitoring', 'Usage']) {
      await page.getByRole('navigation').getByRole('link', { name, exact: true }).waitFor();
    }
    await page.getByRole('button', { name: 'Sign out' }).click();
    await expectOneHeading(page, 'Sign in');
    // The session row is gone: the old page's data calls answer 401, not a redirect.
    const data = await page.request.get(`/console/webhooks/00000000-0000-4000-8000-000000000000/deliveries`);
    expect(data.status()).toBe(401);
    await page.goto('/console/api-keys');
    await expectOneHeading(page, 'Sign in');
  });

  it('tours every page: one h1 in main, no serious accessibility violation, first load measured', async () => {
    const page = await browser.newPage();
    await signIn(page, acme.email, password);
    const tour: Array<[string, string, string | RegExp]> = [
      ['vehicles', '/console/vehicles', 'Vehicles'],
      ['vehicle', `/console/vehicles/${acme.vehicleId}`, 'Acme Fleet Van'],
      ['api-keys', '/console/api-keys', 'API keys'],
      ['webhooks', '/console/webhooks', 'Webhooks'],
      ['monitoring', '/console/monitoring', 'Monitoring'],
      ['usage', '/console/usage', 'Usage'],
    ];
    for (const [name, path, heading] of tour) {
      // A fresh page in a context whose cache is cold for this page's document.
      await page.goto(path);
      await expectOneHeading(page, heading);
      await expectAccessible(page);
      firstLoadMs[name] = await loadMs(page);
      await shoot(page, name);
    }
    await page.goto('/console/vehicles');
    await page
      .getByRole('row', { name: /Box truck 7/ })
      .getByRole('link', { name: 'Box truck 7' })
      .click();
    await expectOneHeading(page, 'Box truck 7');
    expect(await textOf(page.getByRole('row', { name: /^battery_voltage 11/ }))).toContain('11.6');
    await page.getByRole('heading', { level: 2, name: 'Alerts' }).waitFor();
    await shoot(page, 'vehicle');
    expect(await page.evaluate(() => (globalThis as any).document.querySelector('link[rel=icon]')?.href)).toMatch(
      /\/console\/assets\/favicon\.svg/,
    );
  });

  it('creates an API key shown once, which works on the API; revoking it in the dialog makes the API answer 401', async () => {
    const page = await browser.newPage();
    await signIn(page, acme.email, password);
    await page.getByRole('navigation').getByRole('link', { name: 'API keys' }).click();
    const keysBefore = await keyCount(acme);
    await page.getByLabel('Key name').fill('ci pipeline');
    const [created] = await Promise.all([
      page.waitForResponse((r) => r.url() === `${base}/console/api-keys` && r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Create key' }).click(),
    ]);
    // POST/redirect/GET: the form's answer is a 303 to the list, which shows the key once.
    expect(created.status()).toBe(303);
    const field = page.getByLabel('New API key');
    await field.waitFor();
    const key = await field.inputValue();
    expect(key).toMatch(/^fk_/);
    expect(await field.getAttribute('readonly')).not.toBeNull();
    expect(await textOf(page.getByRole('status'))).toBe('Created ci pipeline.');
    await shoot(page, 'api-key-created');
    const row = page.getByRole('row', { name: /ci pipeline/ });
    const rowText = await textOf(row);
    expect(rowText).toContain(key.slice(0, 9));
    expect(rowText).not.toContain(key.slice(9));
    expect(await keyCount(acme)).toBe(keysBefore + 1);

    const call = () => fetch(`${base}/api/v1/vehicles`, { headers: { authorization: `Bearer ${key}` } });
    expect((await call()).status).toBe(200);

    // Reload and Back create nothing, and the key is not shown again.
    await page.reload();
    await expectShownOnce(page, 'New API key', key, /^The new key was shown once and is not shown again\./);
    await shoot(page, 'api-key-reloaded');
    await page.getByRole('navigation').getByRole('link', { name: 'Webhooks' }).click();
    await expectOneHeading(page, 'Webhooks');
    await page.goBack();
    await expectShownOnce(page, 'New API key', key, /^The new key was shown once and is not shown again\./);
    expect(await keyCount(acme)).toBe(keysBefore + 1);
    // Nor does the list page.
    await page.goto('/console/api-keys');
    expect(await page.getByLabel('New API key').count()).toBe(0);
    expect(await page.content()).not.toContain(key);

    await page
      .getByRole('row', { name: /ci pipeline/ })
      .getByRole('button', { name: 'Revoke' })
      .click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    expect(await textOf(dialog.getByRole('heading'))).toBe('Revoke API key?');
    await expectAccessible(page);
    await shoot(page, 'revoke-dialog');
    await dialog.getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('status').waitFor();
    expect(await page.getByRole('row', { name: /ci pipeline/ }).count()).toBe(0);
    expect((await call()).status).toBe(401);
  });

  it('past API_KEYS_PER_COMPANY, Create key answers 303 to an alert shown once; a reload creates nothing, even with room again', async () => {
    const company = await t.createCompany('Capped Co'); // one key already
    const user = { email: 'dev@capped.test', name: 'Capped Dev', password };
    expect((await t.admin('POST', `/companies/${company.id}/users`, user)).statusCode).toBe(201);
    for (let i = 1; i < keyCap; i++) await t.admin('POST', `/companies/${company.id}/api-keys`, { name: `key ${i}` });
    expect(await liveKeyCount(company.id)).toBe(keyCap);

    const page = await browser.newPage();
    await signIn(page, user.email, password);
    await page.getByRole('navigation').getByRole('link', { name: 'API keys' }).click();
    await page.getByLabel('Key name').fill('one too many');
    const [refused] = await Promise.all([
      page.waitForResponse((r) => r.url() === `${base}/console/api-keys` && r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Create key' }).click(),
    ]);
    expect(refused.status()).toBe(303);
    expect(await textOf(page.getByRole('alert'))).toBe(
      `Not created: the company has ${keyCap} live API keys, the most it may have (${keyCap}); revoke one first.`,
    );
    expect(await page.getByLabel('Key name').inputValue()).toBe('one too many');
    expect(await page.getByLabel('New API key').count()).toBe(0);
    await shoot(page, 'api-key-cap');

    // Room again; the reload a person does repeats the GET: no alert a second time, no new key.
    const [first] = (await t.admin('GET', `/companies/${company.id}/api-keys`)).json().data;
    expect((await t.admin('DELETE', `/api-keys/${first.id}`)).statusCode).toBe(200);
    const [reloaded] = await Promise.all([
      page.waitForRequest((r) => r.url().startsWith(`${base}/console/api-keys`)),
      page.reload(),
    ]);
    expect(reloaded.method()).toBe('GET');
    await expectOneHeading(page, 'API keys');
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(await page.getByRole('row', { name: /one too many/ }).count()).toBe(0);
    expect(await liveKeyCount(company.id)).toBe(keyCap - 1);
    await shoot(page, 'api-key-cap-reloaded');
  });

  it('without JavaScript, Revoke opens a confirmation page instead of the dialog', async () => {
    await t.admin('POST', `/companies/${acme.companyId}/api-keys`, { name: 'no-js key' });
    const page = await browser.newPage({ javaScriptEnabled: false });
    await signIn(page, acme.email, password);
    await page.goto('/console/api-keys');
    await page
      .getByRole('row', { name: /no-js key/ })
      .getByRole('button', { name: 'Revoke' })
      .click();
    await expectOneHeading(page, 'Revoke API key');
    await page.getByRole('main').getByRole('button', { name: 'Revoke' }).click();
    expect(await textOf(page.getByRole('status'))).toMatch(/^Revoked no-js key \(fk_.{6}…\)\./);
    expect(await page.getByRole('row', { name: /no-js key/ }).count()).toBe(0);
  });

  it('creates a webhook subscription (secret once); Send test reaches the receiver, then the page, without a reload', async () => {
    const page = await browser.newPage();
    await signIn(page, acme.email, password);
    await page.getByRole('navigation').getByRole('link', { name: 'Webhooks' }).click();
    // A refusal answers 303 to an alert, and the form keeps what was typed.
    await page.getByLabel('Endpoint URL').fill(`${receiver.url}/hooks`);
    const [refused] = await Promise.all([
      page.waitForResponse((r) => r.url() === `${base}/console/webhooks` && r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Create subscription' }).click(),
    ]);
    expect(refused.status()).toBe(303);
    expect(await textOf(page.getByRole('alert'))).toBe('Choose at least one event kind.');
    expect(await page.getByLabel('Endpoint URL').inputValue()).toBe(`${receiver.url}/hooks`);
    // A reload repeats the GET: the alert is not shown twice, and nothing is created.
    const [reloaded] = await Promise.all([
      page.waitForRequest((r) => r.url().startsWith(`${base}/console/webhooks`)),
      page.reload(),
    ]);
    expect(reloaded.method()).toBe('GET');
    await expectOneHeading(page, 'Webhooks');
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(await subscriptionCount(acme)).toBe(0);

    await page.getByLabel('Endpoint URL').fill(`${receiver.url}/hooks`);

    await page.getByLabel('run.created').check();
    await page.getByLabel('run.completed').check();
    const [created] = await Promise.all([
      page.waitForResponse((r) => r.url() === `${base}/console/webhooks` && r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Create subscription' }).click(),
    ]);
    expect(created.status()).toBe(303);
    const secret = await page.getByLabel('Signing secret').inputValue();
    expect(secret).toMatch(/^whsec_/);
    expect(await subscriptionCount(acme)).toBe(1);

    // Reload and Back create nothing, and the secret is not shown again.
    await page.reload();
    await expectShownOnce(
      page,
      'Signing secret',
      secret,
      /^The signing secret was shown once and is not shown again\./,
    );
    await page.getByRole('navigation').getByRole('link', { name: 'Usage' }).click();
    await expectOneHeading(page, 'Usage');
    await page.goBack();
    await expectShownOnce(
      page,
      'Signing secret',
      secret,
      /^The signing secret was shown once and is not shown again\./,
    );
    expect(await subscriptionCount(acme)).toBe(1);

    await page.goto('/console/webhooks');
    expect(await page.content()).not.toContain(secret);
    const card = page.getByRole('region', { name: `${receiver.url}/hooks` });
    await card.getByRole('button', { name: 'Send test' }).click();
    await page.getByRole('status').waitFor();
    await expect.poll(() => receiver.received.filter((r) => r.path === '/hooks').length, { timeout: 15_000 }).toBe(1);
    expect(receiver.received[0]!.json.event).toBe('webhook.test');
    // The live region swaps the delivery in: no navigation happens.
    const navigations: string[] = [];
    page.on('framenavigated', (frame) => navigations.push(frame.url()));
    await card.getByRole('cell', { name: 'succeeded' }).waitFor({ timeout: 15_000 });
    expect(navigations).toEqual([]);
    await shoot(page, 'webhooks');
  });

  it("isolates tenants: another company's vehicle, key and subscription answer 404", async () => {
    const key = (await t.admin('POST', `/companies/${acme.companyId}/api-keys`, { name: 'acme only' })).json().data;
    const page = await browser.newPage();
    await signIn(page, other.email, password);
    expect(await page.getByRole('link', { name: 'Acme Fleet Van' }).count()).toBe(0);
    await page.getByRole('link', { name: 'Other Co Van' }).waitFor();
    for (const path of [`/console/vehicles/${acme.vehicleId}`, `/console/api-keys/${key.id}/revoke`]) {
      const response = await page.goto(path);
      expect(response!.status()).toBe(404);
      await page.getByRole('alert').waitFor();
    }
    await page.goto('/console/api-keys');
    expect(await page.getByRole('row', { name: /acme only/ }).count()).toBe(0);
    const subscription = (
      await t.api('POST', '/webhook-subscriptions', acme.key, { url: `${receiver.url}/acme`, events: ['run.created'] })
    ).json().data;
    expect((await page.request.get(`/console/webhooks/${subscription.id}/deliveries`)).status()).toBe(404);
    const revoke = await page.request.post(`/console/api-keys/${key.id}/revoke`, {
      headers: { origin: base },
      form: { _csrf: await page.locator('input[name=_csrf]').first().inputValue() },
    });
    expect(revoke.status()).toBe(404);
    expect((await t.api('GET', '/vehicles', acme.key)).statusCode).toBe(200);
  });

  it('refuses a state change from another origin (another port of the same host) and one without the form token', async () => {
    const page = await browser.newPage();
    await signIn(page, acme.email, password);
    const keysBefore = (await t.admin('GET', `/companies/${acme.companyId}/api-keys`)).json().data.length;

    // A page on another port: same site, so SameSite=Lax still sends the cookie; Origin does not match.
    const csrfToken = await page.locator('input[name=_csrf]').first().inputValue();
    const attacker: Server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(
        `<!doctype html><title>x</title><form method="post" action="${base}/console/api-keys">` +
          `<input type="hidden" name="_csrf" value="${csrfToken}"><input type="hidden" name="name" value="evil">` +
          `<button>Win a prize</button></form>`,
      );
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    try {
      await page.goto(`http://127.0.0.1:${(attacker.address() as { port: number }).port}/`);
      const [response] = await Promise.all([
        page.waitForResponse((r) => r.url() === `${base}/console/api-keys`),
        page.getByRole('button', { name: 'Win a prize' }).click(),
      ]);
      expect(response.status()).toBe(403);
      await page.getByRole('alert').waitFor();
    } finally {
      await new Promise((resolve) => attacker.close(resolve));
    }

    // The right origin without the session's form token is refused too.
    const noToken = await page.request.post('/console/api-keys', { headers: { origin: base }, form: { name: 'x' } });
    expect(noToken.status()).toBe(403);
    const wrongToken = await page.request.post('/console/api-keys', {
      headers: { origin: base },
      form: { name: 'x', _csrf: 'A'.repeat(43) },
    });
    expect(wrongToken.status()).toBe(403);
    expect((await t.admin('GET', `/companies/${acme.companyId}/api-keys`)).json().data.length).toBe(keysBefore);
  });

  it('cannot be framed by another site: the console, the API docs and the queue board', async () => {
    const framed = ['/console/sign-in', '/docs/', '/admin/queues'];
    // A control: a page without those headers does load in the same frames.
    const control = '/openapi.json';
    const attacker: Server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(
        `<!doctype html><title>x</title>` +
          [...framed, control].map((path) => `<iframe src="${base}${path}" title="${path}"></iframe>`).join(''),
      );
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    try {
      // The board asks for the operator token (HTTP Basic); the browser has it, so only framing can stop it.
      const page = await browser.newPage({ httpCredentials: { username: 'operator', password: adminToken } });
      const answered = [...framed, control].map((path) =>
        page.waitForResponse((r) => r.url() === `${base}${path}` && r.status() === 200),
      );
      await page.goto(`http://127.0.0.1:${(attacker.address() as { port: number }).port}/`);
      await Promise.all(answered);
      const frameUrls = async () => page.frames().map((frame) => frame.url());
      await expect.poll(frameUrls).toContain(`${base}${control}`);
      await expect
        .poll(async () => (await frameUrls()).filter((url) => url.startsWith('chrome-error://')).length)
        .toBe(framed.length);
    } finally {
      await new Promise((resolve) => attacker.close(resolve));
    }
  });

  it('limits failed sign-ins per email: 429 with Retry-After, shown as an alert saying when to retry', async () => {
    const company = await t.createCompany('Limited');
    await t.admin('POST', `/companies/${company.id}/users`, { email: 'limited@acme.test', name: 'L', password });
    const page = await browser.newPage();
    for (let i = 0; i < 3; i++) {
      await submitSignIn(page, 'limited@acme.test', 'wrong password!');
      expect(await textOf(page.getByRole('alert'))).toBe('Wrong email or password.');
    }
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/console/sign-in') && r.request().method() === 'POST'),
      submitSignIn(page, 'limited@acme.test', password),
    ]);
    expect(response.status()).toBe(429);
    expect(Number(response.headers()['retry-after'])).toBeGreaterThan(0);
    expect(await textOf(page.getByRole('alert'))).toMatch(
      /^Too many failed sign-ins\. Try again in \d+ (minutes|seconds) \(after \d\d:\d\d:\d\d UTC\)\.$/,
    );
    // Another email from the same address is still allowed (its own count; the address limit is higher).
    await signIn(page, acme.email, password);
  });

  it('shows monitoring subscriptions with their deliveries, filtered by status, and endpoint health; Retry resends a failed one', async () => {
    const subscribed = await v1(t, 'POST', '/runs/subscribe', acme.key, {
      vehicle_id: acme.vehicleId,
      webhook_url: `${receiver.url}/monitoring`,
      events: ['maintenance_due', 'check_engine_light'],
    });
    expect(subscribed.statusCode).toBe(201);
    const subscription = { id: subscribed.json().data.id, companyId: acme.companyId, vehicleId: acme.vehicleId };
    const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000);
    await insertDelivery(t, subscription, {
      kind: 'maintenance_due',
      status: 'succeeded',
      createdAt: minutesAgo(30),
      attempts: [{ at: minutesAgo(30), statusCode: 200 }],
    });
    await insertDelivery(t, subscription, {
      kind: 'check_engine_light',
      status: 'failed',
      createdAt: minutesAgo(20),
      attempts: [0, 1, 5, 15].map((m) => ({ at: minutesAgo(20 - m), statusCode: 503 })),
    });

    const page = await browser.newPage();
    await signIn(page, acme.email, password);
    await page.getByRole('navigation').getByRole('link', { name: 'Monitoring' }).click();
    const card = page.getByRole('region', { name: `Acme Fleet Van: ${receiver.url}/monitoring` });
    await card.waitFor();
    expect(await textOf(card.getByText('Endpoint health:'))).toMatch(
      /^Endpoint health: 20 % of the last 5 attempts succeeded/,
    );
    await card.getByRole('row', { name: /^maintenance_due succeeded/ }).waitFor();
    expect(await card.getByRole('button', { name: 'Retry' }).count()).toBe(1);

    await page.getByLabel('Status').selectOption('failed');
    await page.getByRole('button', { name: 'Filter' }).click();
    await card.getByRole('row', { name: /^check_engine_light failed 4 HTTP 503/ }).waitFor();
    expect(await card.getByRole('row', { name: /^maintenance_due/ }).count()).toBe(0);
    await expectAccessible(page);

    // Retry sends one more attempt now (the API's retry); a 2xx marks the delivery succeeded.
    await card
      .getByRole('row', { name: /^check_engine_light failed/ })
      .getByRole('button', { name: 'Retry' })
      .click();
    expect(await textOf(page.getByRole('status'))).toBe('Retry sent: the attempt appears under the delivery.');
    await expect
      .poll(() => receiver.received.filter((r) => r.path === '/monitoring').length, { timeout: 15_000 })
      .toBe(1);
    expect(receiver.received.find((r) => r.path === '/monitoring')!.headers['x-service-signature']).toMatch(
      /^sha256=[0-9a-f]{64}$/,
    );
    await card.getByRole('row', { name: /^check_engine_light succeeded 5 HTTP 200/ }).waitFor({ timeout: 15_000 });
    expect(await card.getByRole('button', { name: 'Retry' }).count()).toBe(0);
    await shoot(page, 'monitoring');

    // The live region's fragment: the subscription's deliveries as table rows, by the same filter.
    const fragment = async (query: string) => {
      const response = await page.request.get(`/console/monitoring/${subscription.id}/deliveries${query}`);
      expect(response.status(), query).toBe(200);
      expect(response.headers()['content-type']).toMatch(/^text\/html/);
      return response.text();
    };
    const all = await fragment('');
    expect(all).toMatch(/<th scope="row">check_engine_light<\/th>/);
    expect(all).toMatch(/<th scope="row">maintenance_due<\/th>/);
    expect(await fragment('?status=failed')).toContain('No failed deliveries.');
  });

  it("isolates tenants in monitoring: another company's deliveries fragment and Retry answer 404", async () => {
    const subscribed = await v1(t, 'POST', '/runs/subscribe', other.key, {
      vehicle_id: other.vehicleId,
      webhook_url: `${receiver.url}/other-monitoring`,
      events: ['check_engine_light'],
    });
    expect(subscribed.statusCode).toBe(201);
    const subscription = { id: subscribed.json().data.id, companyId: other.companyId, vehicleId: other.vehicleId };
    const delivery = await insertDelivery(t, subscription, {
      kind: 'check_engine_light',
      status: 'failed',
      createdAt: new Date(Date.now() - 10 * 60_000),
      attempts: [{ at: new Date(Date.now() - 10 * 60_000), statusCode: 503 }],
    });
    const fragmentPath = `/console/monitoring/${subscription.id}/deliveries`;

    // Its owner sees the delivery.
    const owner = await browser.newPage();
    await signIn(owner, other.email, password);
    const own = await owner.request.get(fragmentPath);
    expect(own.status()).toBe(200);
    expect(await own.text()).toMatch(/<th scope="row">check_engine_light<\/th>/);

    const page = await browser.newPage();
    await signIn(page, acme.email, password);
    for (const path of [fragmentPath, '/console/monitoring/00000000-0000-4000-8000-000000000000/deliveries']) {
      const response = await page.request.get(path);
      expect(response.status(), path).toBe(404);
      expect(await response.text()).not.toContain('check_engine_light');
    }
    const retry = await page.request.post(`/console/monitoring/deliveries/${delivery.id}/retry`, {
      headers: { origin: base },
      form: { _csrf: await page.locator('input[name=_csrf]').first().inputValue() },
    });
    expect(retry.status()).toBe(404);
    const attempts = await t.pool.query(`SELECT count(*)::int AS n FROM monitoring_attempts WHERE delivery_id = $1`, [
      delivery.id,
    ]);
    expect(attempts.rows[0].n).toBe(1);
    await page.goto('/console/monitoring');
    await page.getByRole('heading', { level: 1, name: 'Monitoring' }).waitFor();
    expect(await page.content()).not.toContain(`${receiver.url}/other-monitoring`);
  });

  it("shows this month's usage per product with the discount tier, the projection and a daily chart", async () => {
    for (let i = 0; i < 3; i++) {
      const verified = await v1(t, 'POST', '/instant/verify', acme.key, { vin: '1HGCM82633A004352' });
      expect(verified.statusCode).toBe(200);
    }
    const usage = (await v1(t, 'GET', '/usage', acme.key)).json().data;
    const page = await browser.newPage();
    await signIn(page, acme.email, password);
    await page.getByRole('navigation').getByRole('link', { name: 'Usage' }).click();
    await expectOneHeading(page, 'Usage');
    const row = await textOf(page.getByRole('row', { name: /^Instant verifications / }));
    expect(row).toMatch(/^Instant verifications\s+3\s/);
    expect(row).toContain('list price');
    // The page shows the same money as GET /v1/usage.
    expect(await textOf(page.getByRole('row', { name: /^Total / }))).toContain(`$${usage.total.toFixed(2)}`);
    await page.getByRole('img', { name: /^Daily usage this month/ }).waitFor();
    const today = new Date().toISOString().slice(0, 10);
    // Day, history reports, verifications.
    await page.getByRole('row', { name: new RegExp(`^${today} 0 3$`) }).waitFor();
    await expectAccessible(page);
    await shoot(page, 'usage');
  });
});
