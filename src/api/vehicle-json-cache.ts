/**
 * The API's cache of presented vehicles: each entry is one vehicle's JSON exactly as the response
 * schema serializes it, keyed by the row's version (src/db/vehicles.ts `VehicleVersion`). A read
 * asks Postgres for ids and versions only, and decodes and serializes just the rows whose version
 * it has not seen: rows that only pass through are never decoded and re-encoded
 * (docs/performance.md). A changed row has a new version, so an entry is never stale and needs
 * no invalidation across API replicas; least recently used entries go past `maxEntries`.
 */
import type { VehicleRecord } from '../domain/vehicle.js';
import { nextHitRate, probeFirst } from './by-id-read-policy.js';

export class VehicleJsonCache {
  // A Map iterates in insertion order: re-inserting on use keeps the least recently used first.
  // UTF-8 bytes: an answer is assembled by copying them, never by building and encoding a string.
  private readonly entries = new Map<string, { version: string; json: Buffer }>();

  constructor(private readonly maxEntries: number) {}

  get(id: string, version: string): Buffer | undefined {
    const entry = this.entries.get(id);
    if (!entry || entry.version !== version) return undefined;
    this.entries.delete(id);
    this.entries.set(id, entry);
    return entry.json;
  }

  set(id: string, version: string, json: Buffer): void {
    if (this.maxEntries === 0) return;
    this.entries.delete(id);
    this.entries.set(id, { version, json });
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }

  get size(): number {
    return this.entries.size;
  }
}

type LoadedVehicle = VehicleRecord & { version: string };

/** A loaded row's presented JSON, serialized and kept. */
function serialized(cache: VehicleJsonCache, row: LoadedVehicle, serialize: (vehicle: VehicleRecord) => string) {
  const json = Buffer.from(serialize(row));
  cache.set(row.id, row.version, json);
  return json;
}

/**
 * The presented JSON (UTF-8) of each (id, version), in the order asked: from the cache, and for the rest
 * one query (`load`) whose rows are serialized and kept. An id that `load` no longer finds (the
 * vehicle was deactivated meanwhile) is left out.
 */
export async function presentedVehicles(
  cache: VehicleJsonCache,
  wanted: ReadonlyArray<{ id: string; version: string }>,
  load: (ids: string[]) => Promise<LoadedVehicle[]>,
  serialize: (vehicle: VehicleRecord) => string,
): Promise<Buffer[]> {
  const found = new Map<string, Buffer>();
  const missing: string[] = [];
  for (const { id, version } of wanted) {
    const json = cache.get(id, version);
    if (json === undefined) missing.push(id);
    else found.set(id, json);
  }
  if (missing.length > 0) {
    for (const row of await load(missing)) found.set(row.id, serialized(cache, row, serialize));
  }
  return wanted.flatMap(({ id }) => {
    const json = found.get(id);
    return json === undefined ? [] : [json];
  });
}

/**
 * One vehicle's presented JSON, or undefined when it is not found (another company's, deactivated
 * or unknown), read the way its process's recent hit rate says is cheaper (src/api/by-id-read-policy.ts):
 * `probe` for the version first, then `load` only on a miss; or `load` at once, serializing only
 * when the cached JSON is not the loaded version. Each found read updates the hit rate.
 */
export async function presentedVehicleById(
  cache: VehicleJsonCache,
  id: string,
  reads: { hitRate: number },
  probe: () => Promise<string | null>,
  load: (ids: string[]) => Promise<LoadedVehicle[]>,
  serialize: (vehicle: VehicleRecord) => string,
): Promise<Buffer | undefined> {
  if (probeFirst(reads.hitRate)) {
    const version = await probe();
    if (version === null) return undefined;
    const cached = cache.get(id, version);
    reads.hitRate = nextHitRate(reads.hitRate, cached !== undefined);
    if (cached !== undefined) return cached;
    // Deactivated between the probe and the load: not found.
    const [row] = await load([id]);
    return row && serialized(cache, row, serialize);
  }
  const [row] = await load([id]);
  if (row === undefined) return undefined;
  const cached = cache.get(id, row.version);
  reads.hitRate = nextHitRate(reads.hitRate, cached !== undefined);
  return cached ?? serialized(cache, row, serialize);
}
