/**
 * A provider connection's config, checked and completed from its adapter's connection rules
 * (providers/types.ts), so nothing here knows a provider by name. Pure apart from the secret we
 * generate (the generic/simulator signing secret, the Traccar device token), returned once.
 */
import { adapters, pullClients } from '../../providers/index.js';
import type { ProviderConfig, ProviderId } from '../../providers/types.js';
import type { FieldError } from '../errors.js';
import { newSecret } from '../security/secrets.js';
import { targetUrlProblem } from '../http/ssrf.js';

export interface PreparedConfig {
  config: ProviderConfig;
  /** A secret we generated, to show once. */
  generatedSecret: string | null;
}

/**
 * Checks a new connection's config: the provider's own rules, then `base_url` as an outbound
 * target (https, or http only to WEBHOOK_ALLOW_NETS; no blocked address or local name). The pull
 * client checks the address it dials again at every request.
 */
export function prepareConnectionConfig(
  provider: ProviderId,
  input: ProviderConfig,
  allowNets: readonly string[],
): { ok: true; value: PreparedConfig } | { ok: false; errors: FieldError[] } {
  const rules = adapters[provider].connection;
  const config: ProviderConfig = { ...input };
  const errors = rules.problems(config);
  let generatedSecret: string | null = null;
  if (rules.generatedSecret?.when === 'always' && config.webhook_secret)
    errors.push({ field: 'config.webhook_secret', message: `is generated for ${provider} (the device token)` });
  if (rules.generatedSecret && (rules.generatedSecret.when === 'always' || !config.webhook_secret))
    config.webhook_secret = generatedSecret = newSecret(rules.generatedSecret.prefix);
  if (!config.base_url && rules.defaultBaseUrl && config.api_token) config.base_url = rules.defaultBaseUrl;
  const baseUrlProblem = config.base_url ? targetUrlProblem(config.base_url, allowNets) : null;
  if (baseUrlProblem) errors.push({ field: 'config.base_url', message: baseUrlProblem });
  return errors.length > 0 ? { ok: false, errors } : { ok: true, value: { config, generatedSecret } };
}

/**
 * Where the provider pushes (null when it never does). A URL carrying a device token is given only
 * when the connection is `created`: the token is shown once.
 */
export function ingestUrl(
  origin: string,
  provider: ProviderId,
  connectionId: string,
  config: ProviderConfig,
  created: boolean,
): string | null {
  const push = adapters[provider].push;
  if (!push) return null;
  const url = `${origin}/ingest/v1/${provider}/${connectionId}`;
  if (!push.tokenInPath) return url;
  return created ? `${url}/${config.webhook_secret}` : null;
}

/** Whether the connection's feed is pulled on a schedule: its provider has a feed and the connection its credentials. */
export function pullsFeed(provider: ProviderId, config: ProviderConfig): boolean {
  return pullClients[provider]?.pullFeed !== undefined && adapters[provider].connection.pullsFeed?.(config) === true;
}
