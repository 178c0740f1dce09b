/**
 * What each provider's connection config must hold (DESIGN §6), as a pure check. Secrets we
 * generate (the generic/simulator signing secret, the Traccar device token) are returned once.
 */
import type { ProviderConfig, ProviderId } from '../../providers/types.js';
import type { FieldError } from '../errors.js';
import { newSecret } from '../security/secrets.js';

const defaultBaseUrls: Partial<Record<ProviderId, string>> = {
  samsara: 'https://api.samsara.com',
  motive: 'https://api.gomotive.com',
  smartcar: 'https://api.smartcar.com',
};

export interface PreparedConfig {
  config: ProviderConfig;
  /** A secret we generated, to show once. */
  generatedSecret: string | null;
}

function isHttpUrl(value: string): boolean {
  try {
    return ['http:', 'https:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
}

export function prepareConnectionConfig(provider: ProviderId, input: ProviderConfig): { ok: true; value: PreparedConfig } | { ok: false; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const config: ProviderConfig = { ...input };
  const need = (key: keyof ProviderConfig, why: string) => {
    if (!config[key]) errors.push({ field: `config.${key}`, message: `is required ${why}` });
  };
  let generatedSecret: string | null = null;

  switch (provider) {
    case 'samsara':
      if (!config.webhook_secret && !config.api_token) errors.push({ field: 'config', message: 'give webhook_secret (pushes) and/or api_token (pulls)' });
      if (config.webhook_secret && Buffer.from(config.webhook_secret, 'base64').length === 0) {
        errors.push({ field: 'config.webhook_secret', message: 'must be the base64 secret Samsara shows' });
      }
      break;
    case 'geotab':
      need('base_url', 'for Geotab (https://<server>)');
      need('database', 'for Geotab');
      need('username', 'for Geotab');
      need('password', 'for Geotab');
      break;
    case 'motive':
      if (!config.webhook_secret && !config.api_token) errors.push({ field: 'config', message: 'give webhook_secret (pushes) and/or api_token (pulls)' });
      break;
    case 'smartcar':
      need('webhook_secret', 'for Smartcar (the application management token)');
      break;
    case 'generic':
    case 'simulator':
      if (!config.webhook_secret) config.webhook_secret = generatedSecret = newSecret('whsec_');
      break;
    case 'traccar':
      if (config.webhook_secret) errors.push({ field: 'config.webhook_secret', message: 'is generated for Traccar (the device token)' });
      config.webhook_secret = generatedSecret = newSecret('');
      break;
  }
  const defaultBaseUrl = defaultBaseUrls[provider];
  if (!config.base_url && defaultBaseUrl && config.api_token) config.base_url = defaultBaseUrl;
  if (config.base_url && !isHttpUrl(config.base_url)) errors.push({ field: 'config.base_url', message: 'must be an http(s) URL' });
  return errors.length > 0 ? { ok: false, errors } : { ok: true, value: { config, generatedSecret } };
}

/** Where the provider should push: the Traccar URL carries the device token. */
export function ingestUrl(origin: string, provider: ProviderId, connectionId: string, config: ProviderConfig): string | null {
  if (provider === 'geotab') return null;
  return provider === 'traccar'
    ? `${origin}/ingest/v1/traccar/${connectionId}/${config.webhook_secret}`
    : `${origin}/ingest/v1/${provider}/${connectionId}`;
}

/** Whether the connection's feed is pulled on a schedule: a pulled provider with pull credentials. */
export function pullsFeed(provider: string, config: ProviderConfig, feedProviders: readonly string[]): boolean {
  return feedProviders.includes(provider) && (provider === 'geotab' || Boolean(config.api_token));
}
