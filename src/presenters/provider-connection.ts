/** Provider connections as the operator API shows them: which config entries are set, never their values. */
import type { ProviderConfig } from '../../providers/types.js';
import type { ProviderConnectionRecord } from '../db/provider-connections.js';
import type { UnmappedVehicle } from '../db/vehicle-state.js';

/** `ingestUrl`: where the provider pushes, as src/ingest/connection-config.ts gives it (a Traccar URL only in the answer to the creation). */
export function presentProviderConnection(
  record: ProviderConnectionRecord,
  config: ProviderConfig,
  ingestUrl: string | null,
) {
  return {
    id: record.id,
    company_id: record.companyId,
    provider: record.provider,
    name: record.name,
    active: record.active,
    ingest_url: ingestUrl,
    config_keys: Object.keys(config)
      .filter((k) => config[k as keyof ProviderConfig])
      .sort(),
    pull_interval_seconds: record.pullIntervalSeconds,
    last_pull_at: record.lastPullAt?.toISOString() ?? null,
    last_pull_error: record.lastPullError,
    created_at: record.createdAt.toISOString(),
  };
}

export function presentUnmappedVehicle(vehicle: UnmappedVehicle) {
  return {
    provider_vehicle_id: vehicle.providerVehicleId,
    first_seen_at: vehicle.firstSeenAt.toISOString(),
    last_seen_at: vehicle.lastSeenAt.toISOString(),
    samples_count: vehicle.samplesCount,
  };
}
