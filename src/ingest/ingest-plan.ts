/**
 * What one normalized payload writes, as a pure function: the readings to store, the newest
 * sample per vehicle and signal for the latest state, provider events, the vehicles written and
 * the samples of vehicles nobody has mapped yet. No I/O; the ingest worker persists the plan.
 * Its input has passed the ingest stage's sanitation (sanitize.ts): times in range, text storable.
 */
import type { LatestSample, ProviderEvent, Sample } from '../domain/sample.js';
import type { ReadingRow } from '../db/readings.js';
import type { EventRow, UnmappedCount } from '../db/vehicle-state.js';

export interface IngestPlan {
  readings: ReadingRow[];
  /** The newest sample per vehicle and signal, grouped by vehicle in id order. */
  latest: LatestSample[];
  events: EventRow[];
  /**
   * Every mapped vehicle the payload has samples or provider events of, in id order: the batch
   * locks them, and the health stage evaluates them with the payload's cascade flag (the detectors
   * read provider events, so a vehicle with events only is one of them).
   */
  vehicleIds: string[];
  unmapped: UnmappedCount[];
}

/**
 * The newest sample per vehicle, then per signal: two lookups of strings V8 has already hashed,
 * where one key per sample (vehicle and signal joined) was a new string to build and hash each
 * time (the largest item of planIngest in a CPU profile).
 */
type LatestByVehicle = Map<string, Map<string, LatestSample>>;

function keepNewest(latest: LatestByVehicle, sample: LatestSample): void {
  let signals = latest.get(sample.vehicleId);
  if (!signals) {
    signals = new Map();
    latest.set(sample.vehicleId, signals);
  }
  const current = signals.get(sample.signal);
  if (!current || sample.recordedAt.getTime() > current.recordedAt.getTime()) signals.set(sample.signal, sample);
}

function flatten(latest: LatestByVehicle, vehicleIds: readonly string[]): LatestSample[] {
  const samples: LatestSample[] = [];
  for (const vehicleId of vehicleIds) for (const sample of latest.get(vehicleId)?.values() ?? []) samples.push(sample);
  return samples;
}

// Sorted so concurrent batches lock vehicle rows in the same order (no deadlocks).
function sorted(ids: Iterable<string>): string[] {
  return [...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
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
  const latest: LatestByVehicle = new Map();
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
    const reading: ReadingRow = {
      vehicleId,
      signal: sample.signal,
      recordedAt: sample.recordedAt,
      valueNum: numeric ? (sample.value as number) : null,
      valueJson: numeric ? null : sample.value,
      source,
    };
    // Set, not spread: an object spread per reading was a visible part of planIngest's CPU.
    if (!cascade) reading.withoutCascade = true;
    readings.push(reading);
    keepNewest(latest, {
      vehicleId,
      signal: sample.signal,
      recordedAt: sample.recordedAt,
      value: sample.value,
      source,
    });
  }

  const eventRows: EventRow[] = [];
  const vehicles = new Set(latest.keys());
  for (const event of events) {
    const vehicleId = vehicleIds.get(event.providerVehicleId);
    if (vehicleId) {
      eventRows.push({
        vehicleId,
        kind: event.kind,
        recordedAt: event.recordedAt,
        g: event.g,
        source,
        ...(cascade ? {} : { withoutCascade: true }),
      });
      vehicles.add(vehicleId);
    }
  }

  const ids = sorted(vehicles);
  return {
    readings,
    latest: flatten(latest, ids),
    events: eventRows,
    vehicleIds: ids,
    unmapped: [...unmapped.values()],
  };
}

/** One plan for several payloads written together: still one newest sample per vehicle and signal. */
export function mergePlans(plans: readonly IngestPlan[]): IngestPlan {
  if (plans.length === 1) return plans[0]!;
  const latest: LatestByVehicle = new Map();
  const vehicles = new Set<string>();
  const readings: ReadingRow[] = [];
  const events: EventRow[] = [];
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
    for (const sample of plan.latest) keepNewest(latest, sample);
    for (const vehicleId of plan.vehicleIds) vehicles.add(vehicleId);
    // Pushed, not flatMap: V8's generic flatMap was most of mergePlans' own CPU.
    for (const reading of plan.readings) readings.push(reading);
    for (const event of plan.events) events.push(event);
  }
  const ids = sorted(vehicles);
  return {
    readings,
    latest: flatten(latest, ids),
    events,
    vehicleIds: ids,
    unmapped: [...unmapped.values()],
  };
}
