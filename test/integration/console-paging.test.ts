/**
 * Cursor paging of the console's webhook subscriptions and of core and monitoring deliveries, in
 * Chromium (DESIGN §12 "Second round"): "Next" and "Previous" across more than a page, a row added
 * meanwhile shifting no page. Role and label locators only; axe on the deliveries pages;
 * CONSOLE_SCREENSHOTS=1 saves docs/images/console-<page>.png.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { createTestApp, type TestApp } from '../helpers/app.js';
import {
  expectAccessible,
  expectOneHeading,
  launchConsoleBrowser,
  nav,
  shoot,
  signIn,
  textOf,
  type ConsoleBrowser,
} from '../helpers/browser.js';
import { insertDelivery, v1 } from '../helpers/monitoring.js';
import { exactTimeCursor } from '../../src/domain/keyset-page.js';

const password = 'correct horse battery staple';
const admin = { email: 'admin@paging.test', name: 'Paige Admin' };

let t: TestApp;
let browser: ConsoleBrowser;
let company: { id: string; key: string };
let vehicleId: string;

beforeAll(async () => {
  t = await createTestApp({ WEBHOOK_ALLOW_NETS: '127.0.0.1/32' });
  const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  browser = await launchConsoleBrowser(base);
  company = await t.createCompany('Paging Co');
  expect((await t.admin('POST', `/companies/${company.id}/users`, { ...admin, password })).statusCode).toBe(201);
  vehicleId = (await t.createVehicle(company.id, { name: 'Paging Van' })).id;
});

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

async function subscribeWebhook(url: string): Promise<string> {
  const created = await t.api('POST', '/webhook-subscriptions', company.key, { url, events: ['run.created'] });
  expect(created.statusCode, created.body).toBe(201);
  return created.json().data.id;
}

/** A core delivery of an event of kind `kind` (the row's name in the table), as the relay writes one. */
async function insertCoreDelivery(subscriptionId: string, kind: string, createdAt: Date): Promise<void> {
  await t.pool.query(
    `WITH event AS (
       INSERT INTO webhook_events (company_id, kind, payload, occurred_at) VALUES ($1, $3, '{}', $4) RETURNING id)
     INSERT INTO webhook_deliveries (event_id, subscription_id, company_id, status, created_at, completed_at)
     SELECT id, $2, $1, 'failed', $4, $4 FROM event`,
    [company.id, subscriptionId, kind, createdAt],
  );
}

/** The first cells (the event kinds) of the deliveries table's rows. */
async function kindsShown(page: Page): Promise<string[]> {
  await page.getByRole('heading', { level: 2, name: 'Deliveries' }).waitFor();
  return page.getByRole('main').getByRole('rowheader').allTextContents();
}

/** Follows a pager's link and waits for the page it names. */
async function follow(page: Page, pager: string, name: 'Next' | 'Previous'): Promise<void> {
  const link = page.getByRole('navigation', { name: pager }).getByRole('link', { name });
  const href = await link.getAttribute('href');
  await link.click();
  await page.waitForURL((url) => `${url.pathname}${url.search}` === href);
}

const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000);
/** `delivery.<from>` down to `delivery.<to>`, as a page lists them (newest first). */
const kinds = (from: number, to: number) =>
  Array.from({ length: from - to + 1 }, (_, i) => `delivery.${String(from - i).padStart(2, '0')}`);

describe('console paging of webhook subscriptions and deliveries', () => {
  it('pages core webhook subscriptions, 20 a page, stable while one is added', async () => {
    for (let i = 0; i < 25; i++) await subscribeWebhook(`http://127.0.0.1:9/sub-${String(i).padStart(2, '0')}`);
    const page = await browser.newPage();
    await signIn(page, admin.email, password);
    await nav(page, 'Webhooks');
    const shown = () => page.getByRole('main').getByRole('heading', { level: 3 }).allTextContents();
    const first = await shown();
    expect(first).toHaveLength(20);
    expect(first[0]).toBe('http://127.0.0.1:9/sub-24');
    expect(first.at(-1)).toBe('http://127.0.0.1:9/sub-05');
    await subscribeWebhook('http://127.0.0.1:9/late');

    await follow(page, 'Subscription pages', 'Next');
    await expectOneHeading(page, 'Webhooks');
    expect(await shown()).toEqual(
      ['sub-04', 'sub-03', 'sub-02', 'sub-01', 'sub-00'].map((s) => `http://127.0.0.1:9/${s}`),
    );
    expect(
      await page.getByRole('navigation', { name: 'Subscription pages' }).getByRole('link').allTextContents(),
    ).toEqual(['Previous']);
    await follow(page, 'Subscription pages', 'Previous');
    expect(await shown()).toEqual(first);
    await follow(page, 'Subscription pages', 'Previous');
    const top = await shown();
    expect(top[0]).toBe('http://127.0.0.1:9/late');
    expect(top).toHaveLength(20);
  });

  it("pages a core subscription's deliveries on its own page, stable while one arrives", async () => {
    const url = 'http://127.0.0.1:9/many-deliveries';
    const subscriptionId = await subscribeWebhook(url);
    for (let i = 0; i < 45; i++)
      await insertCoreDelivery(subscriptionId, `delivery.${String(i).padStart(2, '0')}`, minutesAgo(60 - i));
    const page = await browser.newPage();
    await signIn(page, admin.email, password);
    await nav(page, 'Webhooks');
    const card = page.getByRole('region', { name: url });
    // The card shows the newest five; its link leads to them all.
    expect(await card.getByRole('rowheader').allTextContents()).toEqual(kinds(44, 40));
    await card.getByRole('link', { name: `All deliveries of ${url}` }).click();
    await expectOneHeading(page, `Deliveries to ${url}`);
    expect(await kindsShown(page)).toEqual(kinds(44, 25));
    await expectAccessible(page);
    await shoot(page, 'webhook-deliveries');

    await insertCoreDelivery(subscriptionId, 'delivery.late', new Date());
    await follow(page, 'Delivery pages', 'Next');
    expect(await kindsShown(page)).toEqual(kinds(24, 5));
    await follow(page, 'Delivery pages', 'Next');
    expect(await kindsShown(page)).toEqual(kinds(4, 0));
    expect(await page.getByRole('navigation', { name: 'Delivery pages' }).getByRole('link').allTextContents()).toEqual([
      'Previous',
    ]);
    await follow(page, 'Delivery pages', 'Previous');
    expect(await kindsShown(page)).toEqual(kinds(24, 5));
    await follow(page, 'Delivery pages', 'Previous');
    expect(await kindsShown(page)).toEqual(kinds(44, 25));
    await follow(page, 'Delivery pages', 'Previous');
    expect(await kindsShown(page)).toEqual(['delivery.late', ...kinds(44, 26)]);
    await expectAccessible(page);

    // A cursor edited by hand (a day the calendar lacks) is no cursor: the list starts at the top.
    const edited = exactTimeCursor('2026-02-30T00:00:00.000000Z', subscriptionId);
    const response = await page.goto(`/console/webhooks/${subscriptionId}?next=${edited}`);
    expect(response!.status()).toBe(200);
    expect(await kindsShown(page)).toEqual(['delivery.late', ...kinds(44, 26)]);
  });

  it("pages a monitoring subscription's deliveries by the status filter, stable while one arrives; Retry comes back to it", async () => {
    const url = 'http://127.0.0.1:9/monitored';
    const subscribed = await v1(t, 'POST', '/runs/subscribe', company.key, {
      vehicle_id: vehicleId,
      webhook_url: url,
      events: ['check_engine_light'],
    });
    expect(subscribed.statusCode, subscribed.body).toBe(201);
    const subscription = { id: subscribed.json().data.id, companyId: company.id, vehicleId };
    // 30 failed ones, with a succeeded one between each two that the filter leaves out.
    for (let i = 0; i < 30; i++) {
      const at = minutesAgo(100 - 2 * i);
      const attempts = [{ at, statusCode: 503 }];
      const kind = `delivery.${String(i).padStart(2, '0')}`;
      await insertDelivery(t, subscription, { kind, status: 'failed', createdAt: at, attempts });
      const later = new Date(at.getTime() + 30_000);
      await insertDelivery(t, subscription, { kind: `ok.${i}`, status: 'succeeded', createdAt: later });
    }
    const page = await browser.newPage();
    await signIn(page, admin.email, password);
    await nav(page, 'Monitoring');
    const name = `Paging Van: ${url}`;
    await page
      .getByRole('region', { name })
      .getByRole('link', { name: `All deliveries of ${name}` })
      .click();
    await expectOneHeading(page, `Deliveries to ${name}`);
    expect(await kindsShown(page)).toHaveLength(20);
    await page.getByLabel('Status').selectOption('failed');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expectOneHeading(page, `Deliveries to ${name}`);
    expect(await kindsShown(page)).toEqual(kinds(29, 10));
    expect(await page.getByRole('main').getByRole('button', { name: 'Retry' }).count()).toBe(20);
    await expectAccessible(page);
    await shoot(page, 'monitoring-deliveries');

    await insertDelivery(t, subscription, { kind: 'delivery.late', status: 'failed', createdAt: new Date() });
    await follow(page, 'Delivery pages', 'Next');
    expect(await kindsShown(page)).toEqual(kinds(9, 0));
    expect(await page.getByLabel('Status').inputValue()).toBe('failed');
    await follow(page, 'Delivery pages', 'Previous');
    expect(await kindsShown(page)).toEqual(kinds(29, 10));
    await follow(page, 'Delivery pages', 'Previous');
    expect(await kindsShown(page)).toEqual(['delivery.late', ...kinds(29, 11)]);

    // Retry answers with this page, by the same filter.
    await page
      .getByRole('row', { name: /^delivery\.20 failed/ })
      .getByRole('button', { name: 'Retry' })
      .click();
    await expectOneHeading(page, `Deliveries to ${name}`);
    expect(await textOf(page.getByRole('status'))).toBe('Retry sent: the attempt appears under the delivery.');
    expect(await page.getByLabel('Status').inputValue()).toBe('failed');
  });
});
