/**
 * The provider pull HTTP client: the webhook SSRF guard and https rule at fetch time, no
 * redirects, and a size limit on every answer; and a pull whose stored base_url the guard refuses.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { providerRequest } from '../../providers/http.js';
import { createPullDeps, pullFeed } from '../../src/ingest/pulls.js';
import { guardedProviderHttp } from '../../src/ingest/provider-http.js';
import { createLogger } from '../../src/log.js';
import { createMetrics } from '../../src/metrics.js';
import { encryptJson } from '../../src/security/secrets.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { startFakeProvider, type FakeProvider } from '../helpers/fake-provider.js';
import { loopbackNets } from '../helpers/pull-context.js';

let api: FakeProvider;
beforeAll(async () => {
  api = await startFakeProvider((request) => {
    if (request.path === '/big') return { body: 'x'.repeat(5000) };
    if (request.path === '/exact') return { body: 'y'.repeat(1000) };
    if (request.path === '/moved') return { status: 302, headers: { location: 'http://169.254.169.254/' }, body: '' };
    return { body: { ok: true } };
  });
});
afterAll(() => api.close());

const get = (url: string) => ({ url, method: 'GET' as const, headers: { accept: 'application/json' } });

describe('guarded provider HTTP', () => {
  it('refuses plain http and loopback addresses outside WEBHOOK_ALLOW_NETS, before a byte is sent', async () => {
    const closed = guardedProviderHttp({ allowNets: [] });
    const before = api.requests.length;
    expect(await closed(get(`${api.url}/data`))).toEqual({
      ok: false,
      message: 'invalid_url: plain http:// is not allowed for this target',
    });
    const https = await closed(get(`${api.url.replace('http:', 'https:')}/data`));
    expect(https).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^ssrf_blocked: .*private or reserved address/),
    });
    expect(api.requests.length).toBe(before);
    // Inside the allow list the same request goes through.
    const open = guardedProviderHttp({ allowNets: loopbackNets });
    expect(await open(get(`${api.url}/data`))).toMatchObject({
      ok: true,
      response: { status: 200, body: '{"ok":true}' },
    });
    expect(api.requests.length).toBe(before + 1);
  });

  it('reads at most maxResponseBytes: a larger answer is a failure, never a truncated page', async () => {
    const http = guardedProviderHttp({ allowNets: loopbackNets, maxResponseBytes: 1000 });
    expect(await http(get(`${api.url}/big`))).toEqual({
      ok: false,
      message: 'the answer is larger than 1000 bytes (HTTP 200)',
    });
    expect(await http(get(`${api.url}/exact`))).toMatchObject({ ok: true, response: { body: 'y'.repeat(1000) } });
    expect(await providerRequest(http, get(`${api.url}/big`))).toEqual({
      ok: false,
      kind: 'failed',
      message: `request to ${new URL(api.url).host} failed: the answer is larger than 1000 bytes (HTTP 200)`,
    });
  });

  it('never follows a redirect', async () => {
    const http = guardedProviderHttp({ allowNets: loopbackNets });
    expect(await providerRequest(http, get(`${api.url}/moved`))).toEqual({
      ok: false,
      kind: 'failed',
      message: `HTTP 302 from ${new URL(api.url).host}: `,
    });
  });
});

describe('a pull whose stored base_url the guard refuses', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('records the refusal as the pull error and backs off; the address is never asked', async () => {
    const { id: companyId } = await t.createCompany();
    // A row written before base_url was checked at creation (or by hand): the fetch-time check still holds.
    const { rows } = await t.pool.query<{ id: string }>(
      `INSERT INTO provider_connections (company_id, provider, config_ciphertext) VALUES ($1, 'samsara', $2) RETURNING id`,
      [companyId, encryptJson(t.config.secretsKey, { api_token: 'tok', base_url: api.url })],
    );
    const deps = createPullDeps({
      config: t.config,
      pool: t.pool,
      queues: t.queues,
      log: createLogger('silent'),
      metrics: createMetrics('provider-http-test'),
      now: () => new Date('2026-11-22T13:00:00Z'),
    });
    const before = api.requests.length;
    expect(await pullFeed(deps, rows[0]!.id)).toMatchObject({ outcome: 'failed', pages: 0 });
    expect(api.requests.length).toBe(before);
    const state = await t.pool.query(`SELECT last_pull_error, next_pull_at FROM provider_connections WHERE id = $1`, [
      rows[0]!.id,
    ]);
    expect(state.rows[0].last_pull_error).toBe(
      `request to ${new URL(api.url).host} failed: invalid_url: plain http:// is not allowed for this target`,
    );
    expect(state.rows[0].next_pull_at).toEqual(new Date('2026-11-22T13:01:00Z'));
  });
});
