import { describe, expect, it } from 'vitest';
import { providerIds } from '../../providers/types.js';
import { ingestUrl, prepareConnectionConfig, pullsFeed } from '../../src/ingest/connection-config.js';

const origin = 'https://fleet.example.com';
const id = '3f0c3d0e-9a4b-4c59-9d1e-0d6f3b0e2a11';

describe('connection config from the adapters connection rules', () => {
  it('gives every provider its ingest URL: none for pull-only Geotab, the device token once for Traccar', () => {
    const urls = Object.fromEntries(
      providerIds.map((provider) => [provider, ingestUrl(origin, provider, id, { webhook_secret: 'tok' }, false)]),
    );
    expect(urls).toEqual({
      samsara: `${origin}/ingest/v1/samsara/${id}`,
      geotab: null,
      motive: `${origin}/ingest/v1/motive/${id}`,
      smartcar: `${origin}/ingest/v1/smartcar/${id}`,
      traccar: null,
      generic: `${origin}/ingest/v1/generic/${id}`,
      simulator: `${origin}/ingest/v1/simulator/${id}`,
    });
    expect(ingestUrl(origin, 'traccar', id, { webhook_secret: 'tok' }, true)).toBe(
      `${origin}/ingest/v1/traccar/${id}/tok`,
    );
  });

  it('pulls a feed only for providers with one, and only with pull credentials', () => {
    const withToken = providerIds.filter((provider) => pullsFeed(provider, { api_token: 't' }));
    expect(withToken).toEqual(['samsara', 'geotab', 'motive']);
    expect(providerIds.filter((provider) => pullsFeed(provider, { webhook_secret: 'only-pushes' }))).toEqual([
      'geotab',
    ]);
  });

  it('generates the secrets that are ours, applies default base URLs, and checks base_url as an outbound target', () => {
    const generic = prepareConnectionConfig('generic', {}, []);
    expect(generic.ok && generic.value.generatedSecret).toMatch(/^whsec_/);
    const brought = prepareConnectionConfig('generic', { webhook_secret: 'integrator-secret' }, []);
    expect(brought.ok && brought.value).toEqual({
      config: { webhook_secret: 'integrator-secret' },
      generatedSecret: null,
    });
    const traccar = prepareConnectionConfig('traccar', {}, []);
    expect(traccar.ok && traccar.value.config.webhook_secret).toBe(traccar.ok && traccar.value.generatedSecret);
    expect(prepareConnectionConfig('traccar', { webhook_secret: 'mine-please' }, [])).toEqual({
      ok: false,
      errors: [{ field: 'config.webhook_secret', message: 'is generated for traccar (the device token)' }],
    });
    expect(prepareConnectionConfig('samsara', { api_token: 't' }, [])).toEqual({
      ok: true,
      value: { config: { api_token: 't', base_url: 'https://api.samsara.com' }, generatedSecret: null },
    });
    // Push-only: no pull credentials, no base URL.
    const pushOnly = prepareConnectionConfig('smartcar', { webhook_secret: 'amt-token' }, []);
    expect(pushOnly.ok && pushOnly.value.config).toEqual({ webhook_secret: 'amt-token' });
    expect(
      prepareConnectionConfig('motive', { api_token: 't', base_url: 'http://10.1.2.3' }, ['10.0.0.0/8']),
    ).toMatchObject({
      ok: true,
    });
    expect(prepareConnectionConfig('motive', { api_token: 't', base_url: 'http://10.1.2.3' }, [])).toEqual({
      ok: false,
      errors: [{ field: 'config.base_url', message: 'must be https' }],
    });
  });
});
