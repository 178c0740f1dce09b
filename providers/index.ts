/**
 * The provider registry: one adapter per provider, and the HTTP client of each provider that can
 * be pulled. Listed explicitly so a reader sees every provider here.
 */
import { generic } from './generic.js';
import { geotab } from './geotab.js';
import { geotabClient } from './geotab.client.js';
import { motive } from './motive.js';
import { motiveClient } from './motive.client.js';
import { samsara } from './samsara.js';
import { samsaraClient } from './samsara.client.js';
import { simulator } from './simulator.js';
import { smartcar } from './smartcar.js';
import { smartcarClient } from './smartcar.client.js';
import { traccar } from './traccar.js';
import { providerIds, type ProviderAdapter, type ProviderId, type PullClient } from './types.js';

export const adapters: Readonly<Record<ProviderId, ProviderAdapter>> = {
  samsara,
  geotab,
  motive,
  smartcar,
  traccar,
  generic,
  simulator,
};

export const pullClients: Readonly<Partial<Record<ProviderId, PullClient>>> = {
  samsara: samsaraClient,
  geotab: geotabClient,
  motive: motiveClient,
  smartcar: smartcarClient,
};

/** Providers whose change feed is pulled on a schedule (Smartcar pushes; it is only pulled on refresh). */
export const feedProviders: readonly ProviderId[] = providerIds.filter((id) => pullClients[id]?.pullFeed !== undefined);

export function isProviderId(value: string): value is ProviderId {
  return (providerIds as readonly string[]).includes(value);
}
