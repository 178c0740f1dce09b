/** Pieces the adapters' connection rules share. */
import type { FieldError } from '../src/errors.js';
import type { ProviderConfig } from './types.js';

/** `keys` must all be set; `why` ends the message ("is required for Geotab"). */
export function requiredKeys(
  config: ProviderConfig,
  keys: ReadonlyArray<keyof ProviderConfig>,
  why: string,
): FieldError[] {
  return keys.filter((key) => !config[key]).map((key) => ({ field: `config.${key}`, message: `is required ${why}` }));
}

/** A provider that both pushes and is pulled needs at least one of the two credentials. */
export function pushOrPullCredentials(config: ProviderConfig): FieldError[] {
  return config.webhook_secret || config.api_token
    ? []
    : [{ field: 'config', message: 'give webhook_secret (pushes) and/or api_token (pulls)' }];
}
