/**
 * Console users and sessions through HTTP (inject): the operator routes, the cookie, idle and
 * absolute expiry, sign-out and disabling, the headers every console answer carries. The browser
 * flows are in console.test.ts.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decryptJson } from '../../src/security/secrets.js';
import { createTestApp, testSecretsKey, type TestApp } from '../helpers/app.js';
import {
  consoleOrigin as origin,
  csrfTokenOf,
  formBody,
  postSignIn,
  sessionCookieOf as cookieOf,
  signInToConsole,
} from '../helpers/console.js';

let t: TestApp;
let clock = new Date('2026-11-24T08:00:00Z');
const password = 'a long enough password';

beforeAll(async () => {
  t = await createTestApp(
    { CONSOLE_SESSION_IDLE_MS: '600000', CONSOLE_SESSION_ABSOLUTE_MS: '3600000', TRUST_PROXY: 'true' },
    () => clock,
  );
});
afterAll(() => t.close());

async function createUser(email: string): Promise<{ id: string; companyId: string }> {
  const company = await t.createCompany();
  const response = await t.admin('POST', `/companies/${company.id}/users`, { email, name: 'Dev', password });
  expect(response.statusCode).toBe(201);
  return { id: response.json().data.id, companyId: company.id };
}

function signIn(email: string, headers: Record<string, string> = {}) {
  return postSignIn(t, email, password, headers);
}

function page(cookie: string, url = '/console/vehicles') {
  return t.app.inject({ method: 'GET', url, headers: { host: 'console.test', cookie } });
}

describe('console users (operator API)', () => {
  it('creates a user without echoing the password, refuses a short one and a taken email, disables', async () => {
    const company = await t.createCompany();
    const created = await t.admin('POST', `/companies/${company.id}/users`, {
      email: 'Ops@Example.test',
      name: 'Ops',
      password,
    });
    expect(created.statusCode).toBe(201);
    expect(created.json().data).toMatchObject({ email: 'ops@example.test', name: 'Ops', disabled_at: null });
    expect(created.body).not.toContain(password);
    const stored = await t.pool.query(`SELECT password_hash FROM console_users WHERE id = $1`, [
      created.json().data.id,
    ]);
    expect(stored.rows[0].password_hash).toMatch(/^scrypt\$32768\$8\$1\$[A-Za-z0-9+/=]{24}\$[A-Za-z0-9+/=]{88}$/);

    const short = await t.admin('POST', `/companies/${company.id}/users`, {
      email: 'a@b.test',
      name: 'A',
      password: 'short',
    });
    expect(short.statusCode).toBe(400);
    const taken = await t.admin('POST', `/companies/${company.id}/users`, {
      email: 'ops@example.test',
      name: 'B',
      password,
    });
    expect(taken.statusCode).toBe(400);
    expect(taken.json().error.details.errors).toEqual([
      { field: 'email', message: 'is already used by another console user' },
    ]);
    const unknownCompany = await t.admin('POST', `/companies/00000000-0000-4000-8000-000000000000/users`, {
      email: 'x@b.test',
      name: 'X',
      password,
    });
    expect(unknownCompany.statusCode).toBe(404);

    const disabled = await t.admin('DELETE', `/users/${created.json().data.id}`);
    expect(disabled.statusCode).toBe(200);
    expect(disabled.json().data.disabled_at).not.toBeNull();
    expect((await t.admin('DELETE', '/users/nope')).statusCode).toBe(404);
    expect(
      (await t.app.inject({ method: 'DELETE', url: `/admin/v1/users/${created.json().data.id}` })).statusCode,
    ).toBe(401);
  });
});

describe('console sessions', () => {
  it('sets an HttpOnly SameSite=Lax cookie on /console, Secure over https, and stores only its hash', async () => {
    await createUser('cookie@example.test');
    const plain = await signIn('cookie@example.test');
    expect(plain.statusCode).toBe(303);
    expect(plain.headers.location).toBe('/console/vehicles');
    expect(plain.headers['set-cookie']).toMatch(
      /^fleet_console=[A-Za-z0-9_-]{43}; Path=\/console; HttpOnly; SameSite=Lax$/,
    );
    const token = cookieOf(plain).split('=')[1]!;
    const rows = await t.pool.query(`SELECT token_hash FROM console_sessions`);
    const stored = rows.rows.map((r) => r.token_hash.toString('hex'));
    expect(stored).toContain(createHash('sha256').update(token).digest('hex'));
    expect(stored.join()).not.toContain(Buffer.from(token).toString('hex'));

    const secure = await signIn('cookie@example.test', {
      'x-forwarded-proto': 'https',
      origin: 'https://console.test',
    });
    expect(secure.headers['set-cookie']).toMatch(/; Secure$/);
  });

  it('ends a session after the idle time and after the absolute lifetime; pages redirect, data calls answer 401', async () => {
    await createUser('expiry@example.test');
    clock = new Date('2026-11-24T09:00:00Z');
    const cookie = cookieOf(await signIn('expiry@example.test'));
    expect((await page(cookie)).statusCode).toBe(200);

    // Used every 9 minutes (idle limit 10): alive until the absolute hour is up.
    for (let minutes = 9; minutes < 60; minutes += 9) {
      clock = new Date(Date.parse('2026-11-24T09:00:00Z') + minutes * 60_000);
      expect((await page(cookie)).statusCode, `at ${minutes} min`).toBe(200);
    }
    clock = new Date('2026-11-24T10:00:01Z');
    const ended = await page(cookie);
    expect([ended.statusCode, ended.headers.location]).toEqual([303, '/console/sign-in']);
    const data = await page(cookie, '/console/webhooks/00000000-0000-4000-8000-000000000000/deliveries');
    expect(data.statusCode).toBe(401);
    expect(data.json().error.code).toBe('UNAUTHORIZED');

    clock = new Date('2026-11-24T11:00:00Z');
    const idle = cookieOf(await signIn('expiry@example.test'));
    clock = new Date('2026-11-24T11:10:01Z');
    expect((await page(idle)).statusCode).toBe(303);
  });

  it('signing in again from the same browser gives a new token and ends the previous session', async () => {
    await createUser('again@example.test');
    const first = cookieOf(await signIn('again@example.test'));
    const second = cookieOf(await signIn('again@example.test', { cookie: first }));
    expect(second).not.toBe(first);
    expect((await page(first)).statusCode).toBe(303);
    expect((await page(second)).statusCode).toBe(200);
  });

  it('disabling a user ends their sessions at once and refuses their sign-in', async () => {
    const user = await createUser('gone@example.test');
    const cookie = cookieOf(await signIn('gone@example.test'));
    expect((await page(cookie)).statusCode).toBe(200);
    await t.admin('DELETE', `/users/${user.id}`);
    expect((await page(cookie)).statusCode).toBe(303);
    expect(
      (
        await t.pool.query(
          `SELECT 1 FROM console_sessions s JOIN console_users u ON u.id = s.user_id WHERE u.email = 'gone@example.test'`,
        )
      ).rowCount,
    ).toBe(0);
    expect((await signIn('gone@example.test')).statusCode).toBe(401);
  });

  it('carries a new key to the page through a flash: sealed at rest, shown once, only to its own session', async () => {
    await createUser('flash@example.test');
    const mine = await signInToConsole(t, 'flash@example.test', password);
    const theirs = await signInToConsole(t, 'flash@example.test', password);
    const create = () => mine.post('/console/api-keys', { name: 'flash key' });
    const flashesOf = async (cookie: string) =>
      (
        await t.pool.query(
          `SELECT f.payload_ciphertext FROM console_flashes f JOIN console_sessions s ON s.id = f.session_id
           WHERE s.token_hash = $1`,
          [createHash('sha256').update(cookie.split('=')[1]!).digest()],
        )
      ).rows.map((r) => r.payload_ciphertext as Buffer);

    const created = await create();
    expect(created.statusCode).toBe(303);
    const location = String(created.headers.location);
    expect(location).toMatch(/^\/console\/api-keys\?created=[0-9a-f-]{36}$/);
    const [sealed] = await flashesOf(mine.cookie);

    // Another session of the same user gets nothing from the link, and leaves the flash in place.
    const other = await page(theirs.cookie, location);
    expect(other.statusCode).toBe(200);
    expect(other.body).not.toContain('New API key');
    expect(await flashesOf(mine.cookie)).toHaveLength(1);

    // A HEAD (a link checker, a prefetch) does not take it either.
    const head = await t.app.inject({
      method: 'HEAD',
      url: location,
      headers: { host: 'console.test', cookie: mine.cookie },
    });
    expect(head.statusCode).toBe(200);
    expect(await flashesOf(mine.cookie)).toHaveLength(1);

    const shown = await page(mine.cookie, location);
    const key = /id="new-key" readonly value="([^"]+)"/.exec(shown.body)![1]!;
    expect(key).toMatch(/^fk_/);
    // Sealed with SECRETS_KEY at rest, and gone once read.
    expect(sealed!.toString('latin1')).not.toContain(key);
    expect(decryptJson(Buffer.from(testSecretsKey, 'hex'), sealed!)).toEqual({ name: 'flash key', key });
    expect(await flashesOf(mine.cookie)).toHaveLength(0);
    const again = await page(mine.cookie, location);
    expect(again.body).not.toContain(key);
    expect(again.body).toContain('The new key was shown once and is not shown again.');

    // A flash never read ends with its session.
    const unread = new URL(String((await create()).headers.location), origin).searchParams.get('created');
    const stored = () => t.pool.query(`SELECT 1 FROM console_flashes WHERE id = $1`, [unread]);
    expect((await stored()).rowCount).toBe(1);
    const signOut = await mine.post('/console/sign-out');
    expect(signOut.statusCode).toBe(303);
    expect((await stored()).rowCount).toBe(0);
  });

  it('answers with a strict CSP and no caching on pages; assets are cached for a year, gzipped', async () => {
    const signInPage = await t.app.inject({ method: 'GET', url: '/console/sign-in' });
    expect(signInPage.headers['content-security-policy']).toBe(
      "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'",
    );
    expect(signInPage.headers['cache-control']).toBe('no-store');
    expect(signInPage.body).not.toMatch(/<script(?![^>]*\bsrc=)/);
    expect(signInPage.body).not.toMatch(/\sstyle=/);
    const asset = await t.app.inject({
      method: 'GET',
      url: '/console/assets/live.js',
      headers: { 'accept-encoding': 'gzip' },
    });
    expect(asset.statusCode).toBe(200);
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(asset.headers['content-encoding']).toBe('gzip');
    expect((await t.app.inject({ method: 'GET', url: '/console/assets/../../package.json' })).statusCode).toBe(404);
  });

  it('refuses a sign-in POST from another origin, and one with neither Origin nor Referer', async () => {
    await createUser('csrf@example.test');
    expect((await signIn('csrf@example.test', { origin: 'http://console.test:8080' })).statusCode).toBe(403);
    const noOrigin = await t.app.inject({
      method: 'POST',
      url: '/console/sign-in',
      headers: { host: 'console.test', 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ email: 'csrf@example.test', password }).toString(),
    });
    expect(noOrigin.statusCode).toBe(403);
    const referer = await t.app.inject({
      method: 'POST',
      url: '/console/sign-in',
      headers: {
        host: 'console.test',
        referer: 'http://console.test/console/sign-in',
        'content-type': 'application/x-www-form-urlencoded',
      },
      payload: new URLSearchParams({ email: 'csrf@example.test', password }).toString(),
    });
    expect(referer.statusCode).toBe(303);
  });

  it('answers hostile requests with a refusal, never a 5xx: HTML pages with an alert, 401/404 envelopes for data calls', async () => {
    await createUser('hostile@example.test');
    const cookie = cookieOf(await signIn('hostile@example.test'));
    const csrf = csrfTokenOf((await page(cookie)).body);
    const headers = { host: 'console.test', origin, cookie, 'content-type': 'application/x-www-form-urlencoded' };
    const requests: Array<{ method: 'GET' | 'POST'; url: string; headers?: Record<string, string>; payload?: string }> =
      [
        {
          method: 'POST',
          url: '/console/api-keys',
          headers,
          payload: formBody({ _csrf: csrf, name: 'x'.repeat(5000) }),
        },
        { method: 'POST', url: '/console/api-keys', headers, payload: formBody({ _csrf: [csrf, csrf], name: 'a' }) },
        { method: 'POST', url: '/console/api-keys', headers, payload: formBody({ _csrf: csrf, extra: 'field' }) },
        {
          method: 'POST',
          url: '/console/api-keys',
          headers: { ...headers, 'content-type': 'application/json' },
          payload: '{}',
        },
        {
          method: 'POST',
          url: '/console/api-keys',
          headers: { ...headers, 'content-type': 'text/plain' },
          payload: 'x',
        },
        {
          method: 'POST',
          url: '/console/webhooks',
          headers,
          payload: formBody({ _csrf: csrf, url: 'http://169.254.169.254/', events: 'run.created' }),
        },
        {
          method: 'POST',
          url: '/console/webhooks',
          headers,
          payload: formBody({ _csrf: csrf, url: 'https://a.test', events: ['x'.repeat(60)] }),
        },
        {
          method: 'POST',
          url: '/console/webhooks',
          headers,
          payload: formBody({ _csrf: csrf, url: 'https://a.test', events: 'run.nope' }),
        },
        { method: 'POST', url: '/console/webhooks/not-an-id/test', headers, payload: formBody({ _csrf: csrf }) },
        {
          method: 'POST',
          url: '/console/monitoring/deliveries/%00/retry',
          headers,
          payload: formBody({ _csrf: csrf }),
        },
        {
          method: 'POST',
          url: '/console/api-keys/00000000-0000-4000-8000-000000000000/revoke',
          headers,
          payload: formBody({ _csrf: csrf }),
        },
        { method: 'GET', url: '/console/vehicles/%ED%A0%80', headers: { host: 'console.test', cookie } },
        { method: 'GET', url: '/console/monitoring?status=exploded', headers: { host: 'console.test', cookie } },
        { method: 'GET', url: '/console/usage?month=2026-13', headers: { host: 'console.test', cookie } },
        { method: 'GET', url: '/console/usage?month=%00', headers: { host: 'console.test', cookie } },
        {
          method: 'GET',
          url: '/console/vehicles',
          headers: { host: 'console.test', cookie: 'fleet_console=%ZZ; x=;;' },
        },
        {
          method: 'GET',
          url: '/console/webhooks/x/deliveries',
          headers: { host: 'console.test', cookie: 'fleet_console=' },
        },
      ];
    for (const request of requests) {
      const response = await t.app.inject(request);
      const what = `${request.method} ${request.url} ${request.payload?.slice(0, 80) ?? ''}`;
      expect(response.statusCode, what).toBeLessThan(500);
      expect(response.headers['x-request-id'], what).toBeDefined();
      if (response.statusCode >= 400) {
        const html = String(response.headers['content-type']).startsWith('text/html');
        if (html) expect(response.body, what).toContain('role="alert"');
        else expect(response.json().success, what).toBe(false);
      }
    }
    // None of it created anything.
    const keys = await t.pool.query(
      `SELECT count(*)::int AS n FROM api_keys k JOIN console_users u ON u.company_id = k.company_id WHERE u.email = 'hostile@example.test'`,
    );
    expect(keys.rows[0].n).toBe(1);
  });
});
