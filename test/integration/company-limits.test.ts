/** Per-company limits: the webhook subscription cap and the Send test rate limit, on the API and in the console. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import { createWithinCap, type CompanyCap } from '../../src/db/company-caps.js';
import { insertRosterMember } from '../../src/db/runs-stage.js';
import { AppError } from '../../src/errors.js';
import { createMetrics } from '../../src/metrics.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { newConsoleUser } from '../helpers/console.js';

let t: TestApp;
const password = 'a long enough password';

beforeAll(async () => {
  t = await createTestApp({
    WEBHOOK_ALLOW_NETS: '127.0.0.1/32',
    WEBHOOK_SUBSCRIPTIONS_PER_COMPANY: '3',
    WEBHOOK_TESTS_PER_MINUTE: '2',
  });
});
afterAll(() => t.close());

const subscribe = (key: string, n = 0) =>
  t.api('POST', '/webhook-subscriptions', key, { url: `http://127.0.0.1:9/hook/${n}`, events: ['run.created'] });

describe('webhook subscription cap', () => {
  it('answers 409 LIMIT_REACHED past WEBHOOK_SUBSCRIPTIONS_PER_COMPANY; deleting one makes room; other companies are unaffected', async () => {
    const acme = await t.createCompany('Capped');
    const other = await t.createCompany('Other');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const response = await subscribe(acme.key, i);
      expect(response.statusCode).toBe(201);
      ids.push(response.json().data.id);
    }
    const refused = await subscribe(acme.key, 3);
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toMatchObject({
      success: false,
      error: { code: 'LIMIT_REACHED', details: { resource: 'webhook subscriptions', limit: 3 } },
      meta: { version: '1.0.0' },
    });
    expect(refused.json().error.message).toContain('delete one');
    expect((await t.api('GET', '/webhook-subscriptions', acme.key)).json().data).toHaveLength(3);

    expect((await subscribe(other.key)).statusCode).toBe(201);

    expect((await t.api('DELETE', `/webhook-subscriptions/${ids[0]}`, acme.key)).statusCode).toBe(200);
    expect((await subscribe(acme.key, 4)).statusCode).toBe(201);
    expect((await subscribe(acme.key, 5)).statusCode).toBe(409);
  });

  it('holds under concurrent creations: exactly the cap succeeds', async () => {
    const busy = await t.createCompany('Concurrent');
    const responses = await Promise.all(Array.from({ length: 12 }, (_, i) => subscribe(busy.key, i)));
    const statuses = responses.map((r) => r.statusCode).sort();
    expect(statuses).toEqual([...Array(3).fill(201), ...Array(9).fill(409)]);
    const { rows } = await t.pool.query(
      `SELECT count(*)::int AS n FROM webhook_subscriptions WHERE company_id = $1 AND deleted_at IS NULL`,
      [busy.id],
    );
    expect(rows[0].n).toBe(3);
  });

  it('is one mechanism any resource can use: the count runs in the locked transaction', async () => {
    const company = await t.createCompany('Generic');
    const cap: CompanyCap = {
      resource: 'roster members',
      limit: 2,
      count: async (q, companyId) =>
        (await q.query(`SELECT count(*)::int AS n FROM dispatch_roster WHERE company_id = $1`, [companyId])).rows[0].n,
    };
    const insert = (name: string) =>
      createWithinCap(t.pool, cap, company.id, (tx) =>
        insertRosterMember(tx, company.id, {
          type: 'shop',
          name,
          skills: [],
          latitude: null,
          longitude: null,
          capacity: 1,
        }),
      );
    const outcomes = await Promise.allSettled(['a', 'b', 'c', 'd'].map(insert));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(2);
    for (const o of outcomes.filter((o) => o.status === 'rejected')) {
      expect((o as PromiseRejectedResult).reason).toBeInstanceOf(AppError);
      expect((o as PromiseRejectedResult).reason.code).toBe('LIMIT_REACHED');
    }
  });
});

describe('Send test rate limit', () => {
  it('answers 429 RATE_LIMITED with Retry-After past WEBHOOK_TESTS_PER_MINUTE per company, across API processes', async () => {
    const acme = await t.createCompany('Tester');
    const other = await t.createCompany('Other tester');
    const subscription = (await subscribe(acme.key)).json().data.id;
    const otherSubscription = (await subscribe(other.key)).json().data.id;
    const sendTest = (key: string, id: string) => t.api('POST', `/webhook-subscriptions/${id}/test`, key);

    expect((await sendTest(acme.key, subscription)).statusCode).toBe(202);
    expect((await sendTest(acme.key, subscription)).statusCode).toBe(202);
    const refused = await sendTest(acme.key, subscription);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ success: false, error: { code: 'RATE_LIMITED' } });
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);

    // The count lives in Redis: a second API process refuses too.
    const second = await buildApp({ ...t.deps, metrics: createMetrics('second') });
    try {
      const viaSecond = await second.inject({
        method: 'POST',
        url: `/api/v1/webhook-subscriptions/${subscription}/test`,
        headers: { authorization: `Bearer ${acme.key}` },
      });
      expect(viaSecond.statusCode).toBe(429);
    } finally {
      await second.close();
    }

    const { rows } = await t.pool.query(
      `SELECT count(*)::int AS n FROM webhook_events WHERE company_id = $1 AND kind = 'webhook.test'`,
      [acme.id],
    );
    expect(rows[0].n).toBe(2);
    expect((await sendTest(other.key, otherSubscription)).statusCode).toBe(202);
    // Other calls of the limited company go on.
    expect((await t.api('GET', `/webhook-subscriptions/${subscription}`, acme.key)).statusCode).toBe(200);
  });
});

describe('in the console, a refusal answers 303 to an alert shown once (POST/redirect/GET)', () => {
  const countOf = async (sql: string, companyId: string) => (await t.pool.query(sql, [companyId])).rows[0].n;

  it('Create subscription past the cap keeps the form as typed; a reload creates nothing, even with room again', async () => {
    const company = await t.createCompany('Console capped');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await subscribe(company.key, i)).json().data.id);
    const user = await newConsoleUser(t, company.id, 'cap@console.test', password);
    const url = 'http://127.0.0.1:9/hook/typed';
    const refused = await user.post('/console/webhooks', { url, events: ['run.created', 'run.completed'] });
    expect(refused.statusCode).toBe(303);
    const location = String(refused.headers.location);
    expect(location).toMatch(/^\/console\/webhooks\?refused=[0-9a-f-]{36}$/);

    const shown = await user.get(location);
    expect(shown.statusCode).toBe(200);
    expect(shown.body).toContain(
      'role="alert">Not created: the company has 3 webhook subscriptions, the most it may have (3); delete one first.</div>',
    );
    expect(shown.body).toContain(`value="${url}"`);
    expect(shown.body).toMatch(/value="run\.created"\s+checked/);
    expect(shown.body).toMatch(/value="run\.completed"\s+checked/);
    expect(shown.body).not.toMatch(/value="run\.dispatch_proposed"\s+checked/);

    expect((await t.api('DELETE', `/webhook-subscriptions/${ids[0]}`, company.key)).statusCode).toBe(200);
    const reloaded = await user.get(location);
    expect(reloaded.statusCode).toBe(200);
    expect(reloaded.body).not.toContain('role="alert"');
    expect(reloaded.body).not.toContain(url);
    const live = `SELECT count(*)::int AS n FROM webhook_subscriptions WHERE company_id = $1 AND deleted_at IS NULL`;
    expect(await countOf(live, company.id)).toBe(2);
  });

  it('Send test past WEBHOOK_TESTS_PER_MINUTE shows when to try again; a reload sends nothing', async () => {
    const company = await t.createCompany('Console tester');
    const subscription = (await subscribe(company.key)).json().data.id;
    const user = await newConsoleUser(t, company.id, 'tester@console.test', password);
    const sendTest = () => user.post(`/console/webhooks/${subscription}/test`);
    for (let i = 0; i < 2; i++) {
      const sent = await sendTest();
      expect(sent.statusCode).toBe(303);
      expect(String(sent.headers.location)).toMatch(/^\/console\/webhooks\?tested=/);
    }
    const refused = await sendTest();
    expect(refused.statusCode).toBe(303);
    const location = String(refused.headers.location);
    expect(location).toMatch(/^\/console\/webhooks\?refused=[0-9a-f-]{36}$/);
    expect((await user.get(location)).body).toMatch(
      /role="alert">Not sent: at most 2 Send test calls per minute per company; try again in \d+ seconds\.<\/div>/,
    );
    const reloaded = await user.get(location);
    expect(reloaded.body).not.toContain('role="alert"');
    const tests = `SELECT count(*)::int AS n FROM webhook_events WHERE company_id = $1 AND kind = 'webhook.test'`;
    expect(await countOf(tests, company.id)).toBe(2);
  });
});
