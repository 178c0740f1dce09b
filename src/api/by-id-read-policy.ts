/**
 * How the API reads one vehicle by id, chosen per process from its recent cache hits
 * (docs/performance.md "By-id reads under ingest"). Probe first: ask Postgres for the row's version
 * (one index probe) and load the row only when the cached JSON is not that version — one round
 * trip on a hit, two on a miss. Load first: load the row with its version at once and reuse the
 * cached JSON when the version matches — one round trip either way, but the full row decoded even
 * on a hit. Idle, reads hit and probing costs least; under ingest nearly every row changes between
 * two reads of it, reads miss, and loading at once saves a round trip.
 */

/** Weight of the newest read in the hit rate: it follows the last ~16 reads. */
const newestWeight = 1 / 16;

/** The hit rate, an exponentially weighted mean of recent reads (1 a hit, 0 a miss), after one more read. */
export function nextHitRate(hitRate: number, hit: boolean): number {
  return hitRate + ((hit ? 1 : 0) - hitRate) * newestWeight;
}

/**
 * Whether to probe the version first. A probe saves a row's decoding on each hit and costs a round
 * trip on each miss, both about one cheap indexed query: it pays while hits are the majority.
 */
export function probeFirst(hitRate: number): boolean {
  return hitRate >= 0.5;
}
