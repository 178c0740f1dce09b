/**
 * The dry run of a monitoring subscription (docs/monitoring.md): the events it would have sent
 * from the stored readings and provider events since a time, replayed on a CPU-pool thread by the
 * same detectors, from a fresh state. Nothing is stored or delivered. Here, above src/cpu-pool/,
 * because it hands the window to the pool; the API route only checks the body and sends the JSON.
 */
import type { Config } from '../config.js';
import type { CpuPool } from '../cpu-pool/pool.js';
import { loadGeofenceIds, loadGeofenceTexts } from '../db/geofences.js';
import { loadLastServices, ruleSignals } from '../db/health.js';
import {
  loadDryRunVehicle,
  readingPagesBetween,
  vehicleEventPagesBetween,
  type JsonPage,
} from '../db/monitoring-history.js';
import type { Pool } from '../db/pool.js';
import { msPerDay } from '../domain/units.js';
import { invalidRequest, notFound } from '../errors.js';
import { effectiveHealthConfig } from '../domain/health-config.js';
import { monitoringSignals } from '../monitoring/engine.js';
import { monitoringOptions } from '../domain/monitoring-kinds.js';
import { requireMonitoringSubscription } from '../monitoring/subscription-actions.js';

/** How far back a dry run may replay: the longest retention but premium's, and a bounded replay. */
export const dryRunMaxDays = 90;
/**
 * Rows per statement when a dry run reads its window: a page of 5,000 location fixes is one JSON
 * text of about 0.8 MB, received in a few ms; the window's 100,000 fixes are 20 such statements.
 */
const dryRunPageRows = 5000;

const historySignals = [...new Set([...ruleSignals, ...monitoringSignals])];

/** Pages of a dry run's window as their JSON texts; past `max` rows in all, `refuse()` is thrown. */
async function* boundedPages<Key>(
  pages: AsyncIterable<JsonPage<Key>>,
  max: number,
  refuse: () => Error,
): AsyncGenerator<string> {
  let rows = 0;
  for await (const page of pages) {
    rows += page.rows;
    if (rows > max) throw refuse();
    yield page.json;
  }
}

export interface DryRunDeps {
  pool: Pool;
  config: Pick<Config, 'monitoringDryRunMaxReadings'>;
  cpuPool: CpuPool;
  now: () => Date;
}

/**
 * The dry run's result as JSON, made on the thread in the API response schema's shape. 404 for a
 * subscription not the company's, 400 for a `since` in the future, more than dryRunMaxDays back or
 * over MONITORING_DRY_RUN_MAX_READINGS, 422 past the pool's budgets, 503 when the pool is full.
 */
export async function dryRunMonitoringSubscription(
  deps: DryRunDeps,
  companyId: string,
  subscriptionId: string,
  since: Date,
): Promise<Buffer> {
  const subscription = await requireMonitoringSubscription(deps.pool, companyId, subscriptionId);
  const until = deps.now();
  if (since.getTime() > until.getTime()) throw invalidRequest([{ field: 'since', message: 'is in the future' }]);
  if (until.getTime() - since.getTime() > dryRunMaxDays * msPerDay) {
    throw invalidRequest([{ field: 'since', message: `must be at most ${dryRunMaxDays} days ago` }]);
  }
  const vehicle = await loadDryRunVehicle(deps.pool, companyId, subscription.vehicleId);
  if (!vehicle) throw notFound('monitoring subscription');
  const max = deps.config.monitoringDryRunMaxReadings;
  const bounded = <Key>(pages: AsyncIterable<JsonPage<Key>>, what: string) =>
    boundedPages(pages, max, () =>
      invalidRequest([
        { field: 'since', message: `the vehicle has more than ${max} ${what} since then; choose a later since` },
      ]),
    );
  const options = monitoringOptions(subscription.options);
  const services = await loadLastServices(deps.pool, [subscription.vehicleId]);
  const fenceIds = await loadGeofenceIds(deps.pool, companyId, options.geofenceIds);
  const fences = await deps.cpuPool.sharedFences(fenceIds, (ids) => loadGeofenceTexts(deps.pool, companyId, ids));
  // The window goes to a CPU-pool thread page by page as it is read (the readings, then the
  // provider events: a window over the bound is refused before the events are read); the replay
  // and the answer's JSON are made there, within the pool's budgets (422 past them).
  return deps.cpuPool.dryRun(
    {
      vehicle: {
        telematicsProvider: vehicle.telematicsProvider,
        createdAt: vehicle.createdAt,
        lastServices: services.get(subscription.vehicleId) ?? {},
      },
      healthConfig: effectiveHealthConfig(vehicle.companyConfig, vehicle.vehicleConfig),
      kinds: subscription.events,
      options,
      now: until,
    },
    { subscriptionId: subscription.id, vehicleId: subscription.vehicleId, since },
    fences,
    {
      readings: bounded(
        readingPagesBetween(deps.pool, subscription.vehicleId, historySignals, since, until, max + 1, dryRunPageRows),
        'readings',
      ),
      events: bounded(
        vehicleEventPagesBetween(deps.pool, subscription.vehicleId, since, until, max + 1, dryRunPageRows),
        'provider events',
      ),
    },
    companyId,
  );
}
