/**
 * What one normalized payload writes, as a pure function: the readings to store, the newest
 * sample per vehicle and signal for the latest state, provider events, per-vehicle summaries and
 * the samples of vehicles nobody has mapped yet. No I/O; the ingest worker persists the plan.
 * Its input has passed the ingest stage's sanitation (sanitize.ts): times in range, text storable.
 */
import type { LatestSample, ProviderEvent, Sample } from '../domain/sample.js';
import type { ReadingRow } from '../db/readings.js';
import type { EventRow, UnmappedCount, VehicleSummary } from '../db/vehicle-state.js';

export interface IngestPlan {
  readings: ReadingRow[];
  latest: LatestSample[];
  events: EventRow[];
  /**
   * Every mapped vehicle the payload has samples or provider events of: the batch locks them, and
   * the health stage evaluates them with the payload's cascade flag (the detectors read provider
   * events, so a vehicle with events only is one of them). `newestAt` is its newest sample's time,
   * or for a vehicle with events only its newest event's.
   */
  vehicles: VehicleSummary[];
  unmapped: UnmappedCount[];
}

export function planIngest(
  samples: readonly Sample[],
  events: readonly ProviderEvent[],
  vehicleIds: ReadonlyMap<string, string>,
  source: string,
  connectionId: string,
  /** False for a refresh that asked for no cascade: its readings and events are marked so (migrations/0027). */
  cascade = true,
): IngestPlan {
  const marked = cascade ? {} : { withoutCascade: true };
  const latest = new Map<string, LatestSample>();
  const vehicles = new Map<string, VehicleSummary>();
  const unmapped = new Map<string, UnmappedCount>();
  const readings: ReadingRow[] = [];

  for (const sample of samples) {
    const vehicleId = vehicleIds.get(sample.providerVehicleId);
    if (!vehicleId) {
      const count = unmapped.get(sample.providerVehicleId);
      if (count) {
        count.samples++;
        if (sample.recordedAt < count.firstSeenAt) count.firstSeenAt = sample.recordedAt;
        if (sample.recordedAt > count.lastSeenAt) count.lastSeenAt = sample.recordedAt;
      } else {
        unmapped.set(sample.providerVehicleId, {
          connectionId,
          providerVehicleId: sample.providerVehicleId,
          samples: 1,
          firstSeenAt: sample.recordedAt,
          lastSeenAt: sample.recordedAt,
        });
      }
      continue;
    }
    const numeric = typeof sample.value === 'number';
    readings.push({
      vehicleId,
      signal: sample.signal,
      recordedAt: sample.recordedAt,
      valueNum: numeric ? (sample.value as number) : null,
      valueJson: numeric ? null : sample.value,
      source,
      ...marked,
    });

    const key = `${vehicleId}\u0000${sample.signal}`;
    const current = latest.get(key);
    if (!current || sample.recordedAt > current.recordedAt) {
      latest.set(key, { vehicleId, signal: sample.signal, recordedAt: sample.recordedAt, value: sample.value, source });
    }

    const summary = vehicles.get(vehicleId) ?? { vehicleId, newestAt: sample.recordedAt, ecuOdometerAt: null };
    if (sample.recordedAt > summary.newestAt) summary.newestAt = sample.recordedAt;
    if (sample.signal === 'odometer_km' && (!summary.ecuOdometerAt || sample.recordedAt > summary.ecuOdometerAt)) {
      summary.ecuOdometerAt = sample.recordedAt;
    }
    vehicles.set(vehicleId, summary);
  }

  const eventRows: EventRow[] = [];
  const eventOnly = new Map<string, VehicleSummary>();
  for (const event of events) {
    const vehicleId = vehicleIds.get(event.providerVehicleId);
    if (vehicleId) {
      eventRows.push({ vehicleId, kind: event.kind, recordedAt: event.recordedAt, g: event.g, source, ...marked });
      if (vehicles.has(vehicleId)) continue;
      const summary = eventOnly.get(vehicleId);
      if (!summary) eventOnly.set(vehicleId, { vehicleId, newestAt: event.recordedAt, ecuOdometerAt: null });
      else if (event.recordedAt > summary.newestAt) summary.newestAt = event.recordedAt;
    }
  }
  for (const [vehicleId, summary] of eventOnly) vehicles.set(vehicleId, summary);

  return {
    readings,
    latest: byVehicle([...latest.values()]),
    events: eventRows,
    vehicles: byVehicle([...vehicles.values()]),
    unmapped: [...unmapped.values()],
  };
}

// Sorted by vehicle so concurrent batches lock rows in the same order (no deadlocks).
function byVehicle<T extends { vehicleId: string }>(rows: T[]): T[] {
  return rows.sort((a, b) => (a.vehicleId < b.vehicleId ? -1 : a.vehicleId > b.vehicleId ? 1 : 0));
}

/** One plan for several payloads written together: still one newest sample per vehicle and signal. */
export function mergePlans(plans: readonly IngestPlan[]): IngestPlan {
  if (plans.length === 1) return plans[0]!;
  const latest = new Map<string, LatestSample>();
  const vehicles = new Map<string, VehicleSummary>();
  // One count per connection and provider vehicle: the upsert may touch each row once.
  const unmapped = new Map<string, UnmappedCount>();
  for (const plan of plans) {
    for (const count of plan.unmapped) {
      const key = `${count.connectionId}\u0000${count.providerVehicleId}`;
      const current = unmapped.get(key);
      unmapped.set(
        key,
        current
          ? {
              ...current,
              samples: current.samples + count.samples,
              firstSeenAt: count.firstSeenAt < current.firstSeenAt ? count.firstSeenAt : current.firstSeenAt,
              lastSeenAt: count.lastSeenAt > current.lastSeenAt ? count.lastSeenAt : current.lastSeenAt,
            }
          : count,
      );
    }
    for (const sample of plan.latest) {
      const key = `${sample.vehicleId}\u0000${sample.signal}`;
      const current = latest.get(key);
      if (!current || sample.recordedAt > current.recordedAt) latest.set(key, sample);
    }
    for (const summary of plan.vehicles) {
      const current = vehicles.get(summary.vehicleId);
      vehicles.set(
        summary.vehicleId,
        current
          ? {
              vehicleId: summary.vehicleId,
              newestAt: summary.newestAt > current.newestAt ? summary.newestAt : current.newestAt,
              ecuOdometerAt:
                !current.ecuOdometerAt || (summary.ecuOdometerAt && summary.ecuOdometerAt > current.ecuOdometerAt)
                  ? summary.ecuOdometerAt
                  : current.ecuOdometerAt,
            }
          : summary,
      );
    }
  }
  return {
    readings: plans.flatMap((p) => p.readings),
    latest: byVehicle([...latest.values()]),
    events: plans.flatMap((p) => p.events),
    vehicles: byVehicle([...vehicles.values()]),
    unmapped: [...unmapped.values()],
  };
}
