/**
 * The cap on live API keys per company (API_KEYS_PER_COMPANY): one shared action behind the
 * operator API and the console's "Create key", counted under a per-company lock so concurrent
 * creations cannot overshoot it. Real app (inject), Postgres and Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { newConsoleUser, type ConsoleSession } from '../helpers/console.js';

const cap = 3;
const password = 'a long enough password';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ API_KEYS_PER_COMPANY: String(cap) });
});
afterAll(() => t.close());

const createKey = (companyId: string, name: string) => t.admin('POST', `/companies/${companyId}/api-keys`, { name });

async function liveKeys(companyId: string): Promise<number> {
  const { rows } = await t.pool.query(
    `SELECT count(*)::int AS n FROM api_keys WHERE company_id = $1 AND revoked_at IS NULL`,
    [companyId],
  );
  return rows[0].n;
}

function consoleCreate(user: ConsoleSession, name: string) {
  return user.post('/console/api-keys', { name });
}

describe('live API keys per company', () => {
  it('operator API: 409 LIMIT_REACHED past the cap; revoking one makes room; other companies are unaffected', async () => {
    const acme = await t.createCompany('Capped keys'); // one key already
    const other = await t.createCompany('Other keys');
    expect((await createKey(acme.id, 'second')).statusCode).toBe(201);
    const third = await createKey(acme.id, 'third');
    expect(third.statusCode).toBe(201);
    const refused = await createKey(acme.id, 'fourth');
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toMatchObject({
      success: false,
      error: { code: 'LIMIT_REACHED', details: { resource: 'api_keys', limit: cap } },
    });
    expect(refused.json().error.message).toBe(
      'the company has 3 live API keys, the most it may have (3); revoke one first',
    );
    expect(await liveKeys(acme.id)).toBe(cap);
    expect((await createKey(other.id, 'theirs')).statusCode).toBe(201);

    expect((await t.admin('DELETE', `/api-keys/${third.json().data.id}`)).statusCode).toBe(200);
    expect((await createKey(acme.id, 'after revoke')).statusCode).toBe(201);
    expect((await createKey(acme.id, 'one too many')).statusCode).toBe(409);
  });

  it('console: past the cap "Create key" answers 303 to an alert shown once; a reload creates nothing, even with room again', async () => {
    const company = await t.createCompany('Console keys');
    const user = await newConsoleUser(t, company.id, 'keys@example.test', password);
    for (const name of ['a', 'b']) {
      const response = await consoleCreate(user, name);
      expect(response.statusCode).toBe(303);
      expect(String(response.headers.location)).toMatch(/^\/console\/api-keys\?created=/);
    }
    const refused = await consoleCreate(user, 'c');
    expect(refused.statusCode).toBe(303);
    const location = String(refused.headers.location);
    expect(location).toMatch(/^\/console\/api-keys\?refused=[0-9a-f-]{36}$/);
    expect(await liveKeys(company.id)).toBe(cap);

    const shown = await user.get(location);
    expect(shown.statusCode).toBe(200);
    expect(shown.headers['content-type']).toMatch(/^text\/html/);
    expect(shown.body).toContain(
      'role="alert">Not created: the company has 3 live API keys, the most it may have (3); revoke one first.</div>',
    );
    // The form keeps the name typed.
    expect(shown.body).toMatch(/<input id="key-name" name="name"[^>]* value="c" \/>/);
    expect(shown.body).not.toContain('New API key');

    // Room again, then the reload a person does: a GET, which shows the alert no more and creates nothing.
    const [first] = (await t.admin('GET', `/companies/${company.id}/api-keys`)).json().data;
    expect((await t.admin('DELETE', `/api-keys/${first.id}`)).statusCode).toBe(200);
    const reloaded = await user.get(location);
    expect(reloaded.statusCode).toBe(200);
    expect(reloaded.body).not.toContain('role="alert"');
    expect(reloaded.body).not.toContain('value="c"');
    expect(await liveKeys(company.id)).toBe(cap - 1);
    // The refusal's message went with its one showing: what is left are the two unread keys' flashes.
    const { rows } = await t.pool.query(
      `SELECT count(*)::int AS n FROM console_flashes f JOIN console_sessions s ON s.id = f.session_id
         JOIN console_users u ON u.id = s.user_id WHERE u.email = 'keys@example.test'`,
    );
    expect(rows[0].n).toBe(2);
  });

  it('holds under concurrent creations from both paths: exactly the cap is live', async () => {
    const company = await t.createCompany('Concurrent keys');
    const user = await newConsoleUser(t, company.id, 'race@example.test', password);
    const responses = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        i % 2 ? createKey(company.id, `api ${i}`) : consoleCreate(user, `ui ${i}`),
      ),
    );
    // The console answers both with 303: to the new key (`?created=`) or to the refusal (`?refused=`).
    const consoleTo = (r: (typeof responses)[number], kind: string) =>
      r.statusCode === 303 && String(r.headers.location).includes(`?${kind}=`);
    const created = responses.filter((r) => r.statusCode === 201 || consoleTo(r, 'created'));
    const refused = responses.filter((r) => r.statusCode === 409 || consoleTo(r, 'refused'));
    expect([created.length, refused.length]).toEqual([cap - 1, 12 - (cap - 1)]);
    expect(await liveKeys(company.id)).toBe(cap);
  });
});
