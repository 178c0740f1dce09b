/**
 * The places bench's measuring process (bench/places.ts starts it with --expose-gc, so its heap and
 * RSS hold nothing but the places): load time, memory after load, then nearest-place lookups, each
 * timed on its own. Prints one JSON line. Arguments: lookups per workload.
 */
import { loadPlaces, nearestPlace, type PlacePoint } from '../src/domain/places.js';
import { memoryOf } from './support.js';

const lookups = Number(process.argv[2] ?? 100_000);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');

/** Deterministic pseudo-random numbers: the same points on every run. */
function randomSource(seed: number): () => number {
  let state = seed;
  return () => (state = (state * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
}

function memory() {
  gc!();
  gc!();
  // `external` includes the typed arrays' buffers (`arrayBuffers`).
  const { heapUsed, rss, external } = process.memoryUsage();
  return { heapUsed, rss, external };
}

const mib = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;

const before = memory();
const started = performance.now();
const places = loadPlaces();
const loadMs = performance.now() - started;
const after = memory();
const { peakMiB } = memoryOf(process.pid);

/** Mean, p99 and worst of `points`' lookups in µs, and the share that found a place. */
function time(points: PlacePoint[]) {
  const micros = new Float64Array(points.length);
  let found = 0;
  for (const [i, point] of points.entries()) {
    const t0 = process.hrtime.bigint();
    if (nearestPlace(point, places)) found++;
    micros[i] = Number(process.hrtime.bigint() - t0) / 1000;
  }
  const sorted = micros.slice().sort();
  const mean = micros.reduce((sum, us) => sum + us, 0) / micros.length;
  const round = (us: number) => Math.round(us * 10) / 10;
  return {
    meanUs: round(mean),
    p99Us: round(sorted[Math.floor(sorted.length * 0.99)]!),
    maxUs: round(sorted[sorted.length - 1]!),
    foundShare: Math.round((found / points.length) * 1000) / 1000,
  };
}

const random = randomSource(18);
// Where vehicles are: within about 20 km of a random place.
const nearPlaces = Array.from({ length: lookups }, () => {
  const id = Math.floor(random() * places.size);
  return { lat: places.lat[id]! + (random() - 0.5) * 0.4, lon: places.lon[id]! + (random() - 0.5) * 0.4 };
});
// Anywhere on Earth, uniform by area: mostly sea, ice and desert, where the search finds nothing.
const anywhere = Array.from({ length: lookups }, () => ({
  lat: (Math.asin(2 * random() - 1) * 180) / Math.PI,
  lon: random() * 360 - 180,
}));
// Warm the code paths the way a running API has.
time(nearPlaces.slice(0, 10_000));
time(anywhere.slice(0, 10_000));

console.log(
  JSON.stringify({
    places: places.size,
    loadMs: Math.round(loadMs),
    memoryMiB: {
      heapUsed: mib(after.heapUsed - before.heapUsed),
      external: mib(after.external - before.external),
      rss: mib(after.rss - before.rss),
      rssBefore: mib(before.rss),
      rssPeak: peakMiB,
    },
    nearPlaces: time(nearPlaces),
    anywhere: time(anywhere),
  }),
);
