/**
 * No HTML page of the service may be framed (clickjacking): the API docs, the queue board and the
 * console all answer `X-Frame-Options: DENY` and a CSP with `frame-ancestors 'none'`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminToken, createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const operator = { authorization: `Basic ${Buffer.from(`operator:${adminToken}`).toString('base64')}` };

describe('framing', () => {
  it.each([
    ['the API docs', '/docs/', {}],
    ['the API docs without the slash', '/docs', {}],
    ['the queue board', '/admin/queues', operator],
    ['a queue board view', '/admin/queues/queue/ingest', operator],
    ['the console sign-in', '/console/sign-in', {}],
  ])('forbids framing %s (%s)', async (_what, url, headers) => {
    const page = await t.app.inject({ url, headers });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(String(page.headers['content-security-policy'])).toMatch(/(^|; )frame-ancestors 'none'(;|$)/);
  });

  it("keeps the console's fuller policy and adds nothing to API answers", async () => {
    const signIn = await t.app.inject({ url: '/console/sign-in' });
    expect(signIn.headers['content-security-policy']).toBe(
      "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'",
    );
    const api = await t.app.inject({ url: '/healthz' });
    expect(api.headers['content-type']).toMatch(/^application\/json/);
    expect(api.headers['content-security-policy']).toBeUndefined();
  });
});
