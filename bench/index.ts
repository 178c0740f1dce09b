/**
 * `npm run bench [-- name...]`: runs the named benchmarks (all when none is named), prints each
 * figure beside its ceiling measured in the same run, and writes JSON to bench/results/.
 */
import { benchApi } from './api.js';
import { benchGeofences } from './geofences.js';
import { benchHealth } from './health.js';
import { benchIngest } from './ingest.js';
import { benchIngestProfile } from './ingest-profile.js';
import { benchMonitoring } from './monitoring.js';
import { benchPlaces } from './places.js';
import { benchReports } from './reports.js';
import { benchSoak } from './soak.js';
import { benchStorage } from './storage.js';
import { writeResult } from './support.js';
import { benchWebhooks } from './webhooks.js';

/** Each bench gets the command-line options (e.g. `--readings 200000` for ingest and monitoring, `--events 20000` for webhooks and monitoring). */
const benches: Record<string, (args: string[]) => Promise<Record<string, unknown>>> = {
  api: benchApi,
  ingest: benchIngest,
  'ingest-profile': benchIngestProfile,
  health: benchHealth,
  webhooks: benchWebhooks,
  monitoring: benchMonitoring,
  geofences: benchGeofences,
  reports: benchReports,
  places: benchPlaces,
  storage: benchStorage,
  soak: benchSoak,
};

const args = process.argv.slice(2);
const requested = args.filter((arg, i) => !arg.startsWith('--') && !args[i - 1]?.startsWith('--'));
const names = requested.length > 0 ? requested : Object.keys(benches);
for (const name of names) {
  const bench = benches[name];
  if (!bench) {
    console.error(`unknown bench "${name}": choose from ${Object.keys(benches).join(', ')}`);
    process.exit(2);
  }
  const result = await bench(args);
  console.log(
    `results written to ${writeResult(name, { bench: name, at: new Date().toISOString(), node: process.version, ...result })}`,
  );
}
process.exit(0);
