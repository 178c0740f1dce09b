/** Per-company limits: the webhook subscription cap and the Send test rate limit. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/api/app.js';
import { createWithinCap, type CompanyCap } from '../../src/api/company-caps.js';
import { insertRosterMember } from '../../src/db/runs-stage.js';
import { AppError } from '../../src/errors.js';
import { createMetrics } from '../../src/metrics.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;

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
